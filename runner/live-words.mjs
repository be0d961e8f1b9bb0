// The streamed words' own path (#40, docs/engine.md "Live view"): the runner appends the assistant's text to
// the run's words.jsonl as it streams, at most every WORDS_MS, and pokes the store's words/<rowId>, so a
// screen shows a word about WORDS_MS after the model sent it instead of at status.json's next write (up to
// 250 ms later), and a watcher reads only that file's end for it, not the row. status.json keeps its live
// text at 4 writes a second; a reader shows whichever is newer (withWords). Both files are hints with one
// writer, the run's runner: a write that fails (a full disk, something planted in the place) is dropped,
// and the status still carries the text.
import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { openAppend } from "./store/append-file.mjs";
import { plainFileProblem } from "./store/dir-guard.mjs";
import { ensureDir, FILE_MODE, touchNotify } from "./store/fs-util.mjs";
import { LIVE_TEXT_CHARS, summarize } from "./life/state-rules.mjs";
import { tail } from "./life/text-rules.mjs";

/** @typedef {import("./life/state-rules.mjs").RunStatus} RunStatus */
/** The newest words of the message streaming now, and when the runner wrote them (ms since the epoch). @typedef {{ text: string, at: number }} LiveWords */

export const WORDS_FILE = "words.jsonl";
/** The store's directory of pokes, one file per row, rewritten in place at each append to words.jsonl. */
export const WORDS_DIR = "words";
/** A streamed word waits at most this long for its append. */
export const WORDS_MS = 25;
/** How much of the file's end a reader reads: several times LIVE_TEXT_CHARS, even escaped. */
const TAIL_BYTES = 4 * 1024;

/** @param {unknown} value @returns {Record<string, unknown>} */
const obj = (value) => (value && typeof value === "object" ? /** @type {Record<string, unknown>} */ (value) : {});

export class WordsWriter {
	/** @param {{ runDir: string, storeDir: string, rowId: string }} run */
	constructor(run) {
		this.run = run;
		this.path = join(run.runDir, WORDS_FILE);
		/** Assistant messages begun: a line's `m`, so a reader takes the newest message's lines only. */
		this.message = 0;
		this.pending = "";
		this.lastFlush = 0;
		/** @type {NodeJS.Timeout | undefined} */
		this.timer = undefined;
		/** @type {number | undefined} */
		this.fd = undefined;
		/** Something not ours is in the file's place: nothing is written there. */
		this.refused = false;
		/** @type {number | undefined} */
		this.pokeFd = undefined;
		/** The next line starts its message's words over (`r`): relayed lines read afresh. */
		this.restart = false;
	}

	/** One worker event, as the runner applies it to the status. @param {Record<string, unknown>} event */
	observe(event) {
		if (event.type === "message_start" && obj(event.message).role === "assistant") {
			this.flush();
			this.message += 1;
			return;
		}
		if (event.type === "message_update") {
			const update = obj(event.assistantMessageEvent);
			if (update.type !== "text_delta" || typeof update.delta !== "string" || !update.delta) return;
			this.pending = tail(`${this.pending}${update.delta}`, LIVE_TEXT_CHARS);
			// A word after a pause goes out with the events that came in the same chunk, the rest at the mark.
			this.timer ??= setTimeout(() => this.flush(), Math.max(0, this.lastFlush + WORDS_MS - Date.now()));
			return;
		}
		if (event.type === "message_end" && obj(event.message).role === "assistant") this.flush();
	}

	flush() {
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
		if (!this.pending || this.refused) return;
		const text = this.pending;
		this.pending = "";
		this.lastFlush = Date.now();
		try {
			this.fd ??= openAppend(this.path);
			const line = { m: this.message, at: this.lastFlush, t: text, ...(this.restart ? { r: 1 } : {}) };
			writeSync(this.fd, `${JSON.stringify(line)}\n`);
			this.restart = false;
		} catch (error) {
			if (error instanceof Error && error.name === "PlantedFileError") this.refused = true;
			return;
		}
		this.poke();
	}

	/**
	 * Lines another runner wrote (a target's, brought by the run's link): their messages and words, written
	 * here stamped with this machine's clock, as the link's status is, since the two clocks differ.
	 * `restart`: the lines are the far file's end read afresh (a new follow), not what followed the last.
	 * @param {string} text @param {boolean} [restart]
	 */
	relay(text, restart = false) {
		// A follow begun again sends the far file's end again: the reader starts the message over from it.
		if (restart) {
			this.flush();
			this.restart = true;
		}
		for (const raw of text.split("\n")) {
			const line = parsed(raw);
			if (!line) continue;
			if (line.m !== this.message) {
				this.flush();
				this.message = line.m;
			}
			this.pending = tail(`${this.pending}${line.t}`, LIVE_TEXT_CHARS);
		}
		this.flush();
	}

	/** Tells watchers the words grew: one byte rewritten in place (inotify's modify); else the row's notify. */
	poke() {
		try {
			if (this.pokeFd === undefined) {
				const dir = join(this.run.storeDir, WORDS_DIR);
				ensureDir(dir);
				const fd = openSync(
					join(dir, this.run.rowId),
					constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
					FILE_MODE,
				);
				if (plainFileProblem(fstatSync(fd))) {
					closeSync(fd);
					throw new Error("not a plain file of its own");
				}
				this.pokeFd = fd;
			}
			writeSync(this.pokeFd, "1", 0);
		} catch {
			touchNotify(this.run.storeDir, this.run.rowId);
		}
	}

	close() {
		this.flush();
		for (const fd of [this.fd, this.pokeFd]) if (fd !== undefined) closeSync(fd);
		this.fd = undefined;
		this.pokeFd = undefined;
	}
}

/** How far a reader has read one run's words.jsonl, and the newest message's words up to there. @typedef {{ ino: number, offset: number, message: number, text: string, at: number }} Followed */

/**
 * Follows runs' words.jsonl by offset: a read takes only what was appended since the last (a line or two
 * while a row streams), or the file's last TAIL_BYTES the first time. Remembers at most `max` runs.
 */
export class WordsFollower {
	/** @param {number} [max] */
	constructor(max = 1024) {
		this.max = max;
		/** @type {Map<string, Followed>} */
		this.runs = new Map();
	}

	/**
	 * The newest message's words in a run's words.jsonl, or undefined (none, unreadable, or not a plain file
	 * of its own). Lines are checked for shape; a torn or odd line is skipped.
	 * @param {string} runDir @returns {LiveWords | undefined}
	 */
	read(runDir) {
		const known = this.runs.get(runDir);
		this.runs.delete(runDir);
		const got = appendedWords(runDir, known);
		if (!got) return undefined;
		const state = known && !got.fresh ? known : { ino: got.ino, offset: 0, message: -1, text: "", at: 0 };
		follow(state, got.text);
		[state.ino, state.offset] = [got.ino, got.offset];
		this.runs.set(runDir, state);
		if (this.runs.size > this.max) this.runs.delete(this.runs.keys().next().value ?? "");
		return state.message >= 0 ? { text: state.text, at: state.at } : undefined;
	}
}

/**
 * The whole lines appended to a run's words.jsonl since `from` (its inode and offset); the first time, or when
 * the file was replaced or more than TAIL_BYTES came since (`fresh`), the whole lines of its last TAIL_BYTES.
 * A torn last line (the runner is mid-append) is left for the next read. undefined: no plain file of its own.
 * @param {string} runDir @param {{ ino: number, offset: number } | undefined} from
 * @returns {{ ino: number, offset: number, text: string, fresh: boolean } | undefined}
 */
export function appendedWords(runDir, from) {
	let fd;
	try {
		fd = openSync(join(runDir, WORDS_FILE), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	} catch {
		return undefined;
	}
	try {
		const stat = fstatSync(fd);
		if (plainFileProblem(stat)) return undefined;
		const fresh = !from || from.ino !== stat.ino || stat.size < from.offset || stat.size - from.offset > TAIL_BYTES;
		const start = !from || fresh ? Math.max(0, stat.size - TAIL_BYTES) : from.offset;
		if (stat.size <= start) return { ino: stat.ino, offset: start, text: "", fresh };
		const buffer = Buffer.alloc(stat.size - start);
		const got = readSync(fd, buffer, 0, buffer.length, start);
		const whole = buffer.subarray(0, got).lastIndexOf(0x0a) + 1;
		// Read from mid-file: its first line is a piece of one.
		const skip = fresh && start > 0 ? buffer.indexOf(0x0a) + 1 : 0;
		const text = whole > skip ? buffer.subarray(skip, whole).toString("utf8") : "";
		return { ino: stat.ino, offset: start + whole, text, fresh };
	} catch {
		return undefined;
	} finally {
		closeSync(fd);
	}
}

/** One read of a run's words, remembering nothing. @param {string} runDir */
export const readWords = (runDir) => new WordsFollower(1).read(runDir);

/**
 * Whole lines of words.jsonl, in order, into what a reader holds: a new message's words start over.
 * @param {Followed} state @param {string} text
 */
export function follow(state, text) {
	for (const raw of text.split("\n")) {
		const line = parsed(raw);
		if (!line) continue;
		if (line.m !== state.message || line.r) [state.message, state.text] = [line.m, ""];
		state.text = tail(`${state.text}${line.t}`, LIVE_TEXT_CHARS);
		state.at = line.at;
	}
}

/** One line of words.jsonl when it has the shape; a torn last line (mid-append) or a stray one is skipped. @param {string} line */
function parsed(line) {
	if (!line) return undefined;
	try {
		const value = obj(JSON.parse(line));
		if (Number.isSafeInteger(value.m) && Number.isFinite(value.at) && typeof value.t === "string")
			return { m: Number(value.m), at: Number(value.at), t: String(value.t), r: value.r === 1 };
	} catch {
		// Skipped: the next read has it whole.
	}
	return undefined;
}

/**
 * The status a reader shows: with the words as its live text when the runner wrote them after the status's
 * last change (`updatedAt`: a word streamed since), else the status as it is. A streamed word means the model
 * answers now: no tool runs, nothing waits for the model or retries; the summary follows. Words of the same
 * millisecond lose: a message's last words and the tool it starts are often written in one. Never changes
 * `status` (it may be a cached read).
 * @param {RunStatus} status @param {LiveWords | undefined} words @returns {RunStatus}
 */
export function withWords(status, words) {
	if (!words || status.state !== "working" || words.at <= status.updatedAt || status.live?.text === words.text)
		return status;
	const { tool: _tool, waitingSince: _waiting, retry: _retry, ...live } = status.live ?? {};
	const next = { ...status, live: { ...live, text: words.text } };
	next.summary = summarize(next);
	return next;
}
