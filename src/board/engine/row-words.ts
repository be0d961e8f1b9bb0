/**
 * A row with its run's newest streamed words (runner/live-words.mjs), read alone: what a watcher does when
 * only the words grew. It reads what was appended to the run's words.jsonl since the last read (one
 * follower per process, by offset) and the run's status from the cache (one lstat while it is unchanged),
 * never the row's other files; the live text and summary are taken as a whole read takes them, sanitised.
 */
import { withWords, WordsFollower } from "../../../runner/live-words.mjs";
import type { EngineContext } from "./engine-context.ts";
import { sanitizeText } from "./sanitize.ts";
import { liveFrom, readStatus } from "./store.ts";
import type { BoardRow } from "./types.ts";

const follower = new WordsFollower();

/** The newest message's words of a run, read on from the last read of it. */
export const newestWords = (runDir: string) => follower.read(runDir);

export function rowWithWords(ctx: EngineContext, row: BoardRow): BoardRow {
	if (!row.alive || row.state !== "working" || !row.runDir || row.errorCode === "disk-full") return row;
	try {
		const status = readStatus(row.runDir, ctx.cache);
		const shown = withWords(status, newestWords(row.runDir));
		if (shown === status) return row;
		return { ...row, live: liveFrom(shown.live), summary: sanitizeText(shown.summary ?? "") };
	} catch {
		// A status mid-write or gone: the row's next read says what it is.
		return row;
	}
}
