/**
 * A row in words, for every UI of the board (dashboard, subcommands, footer, strip): state glyphs and
 * labels, ages, usage, what the agent is doing now, the summary column and the newest words of a live
 * reply. Pure: no I/O, no theme, so it is cheap to test and to run for the rows on screen.
 */
import { budgetText } from "./budget-text.ts";
import { truncateToWidth, visibleWidth } from "@earendil-works/pi-tui";
import { LOCAL_TARGET } from "../../../runner/life/vocabulary.mjs";
import { LIVE_TEXT_CHARS } from "../../../runner/life/state-rules.mjs";
import { formatAge } from "../../../runner/time-words.mjs";
import { sanitizeText } from "../engine/sanitize.ts";
import type { AttemptInfo, BoardRow, DiffStats, FileOverlap, MergedInfo, RowState } from "../engine/types.ts";

export { formatAge };

/** Needs input first: it is the only state where the board waits on the user. */
export const STATE_ORDER: readonly RowState[] = [
	"needs_input",
	"working",
	"queued",
	"failed",
	"error",
	"stopped",
	"completed",
	"idle",
];

export const STATE_GLYPH: Record<RowState, string> = {
	needs_input: "?",
	working: ">",
	queued: ".",
	failed: "x",
	error: "!",
	stopped: "-",
	completed: "+",
	idle: "o",
};

export const STATE_LABEL: Record<RowState, string> = {
	needs_input: "Needs input",
	working: "Working",
	queued: "Queued",
	failed: "Failed",
	error: "Error",
	stopped: "Stopped",
	completed: "Completed",
	idle: "Idle",
};

/** Worker-supplied text for one line: no control sequences, whitespace runs folded. */
export function clean(text: string | undefined): string {
	return text ? sanitizeText(text).replace(/\s+/g, " ").trim() : "";
}

/** Worker-supplied text kept multi-line, control sequences removed. */
export function cleanBlock(text: string | undefined): string {
	return text ? sanitizeText(text, { multiline: true }) : "";
}

export function isUnread(row: BoardRow): boolean {
	return row.lastActivityAt > (row.lastViewedAt ?? 0);
}

/** When the row last did something visible: a streaming reply's status is rewritten as its text arrives. */
export function lastActive(row: BoardRow): number {
	return row.alive && row.live?.text ? Math.max(row.lastActivityAt, row.updatedAt) : row.lastActivityAt;
}

export function formatTokens(n: number): string {
	if (n < 1000) return String(n);
	if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
	return `${(n / 1_000_000).toFixed(1)}M`;
}

export function formatCost(cost: number): string {
	if (cost <= 0) return "";
	return cost < 0.01 ? `$${cost.toFixed(4)}` : `$${cost.toFixed(2)}`;
}

export function formatUsage(row: BoardRow): string {
	const budget = budgetText(row);
	if (budget) return budget;
	if (!row.usage || row.usage.totalTokens <= 0) return "";
	const cost = formatCost(row.usage.cost);
	return `${formatTokens(row.usage.totalTokens)} tok${cost ? ` ${cost}` : ""}`;
}

export function formatDiff(row: BoardRow, stats: DiffStats | undefined = row.diff): string {
	if (!stats) return "";
	return `+${stats.added} -${stats.removed} ${stats.files}f`;
}

export function shortPath(path: string, home?: string): string {
	if (home && (path === home || path.startsWith(`${home}/`))) return `~${path.slice(home.length)}`;
	return path;
}

/** Where the row runs: a target's name, or "local" (this machine). */
export function targetOf(row: BoardRow): string {
	const target = clean(row.target) || LOCAL_TARGET;
	// A pool's row, once placed: the pool and the member it runs on ("build/box2").
	return row.host && row.host !== row.target ? `${target}/${clean(row.host)}` : target;
}

/** `hh:mm` of a time, local clock: the one such format (a row's times, serve's "since", replay's stamps). */
export function clockTime(ms: number): string {
	return new Date(ms).toTimeString().slice(0, 5);
}

/** "unreachable since 14:03: ssh: connect ... refused" (its run goes on there), or "" when reachable. */
export function unreachableText(row: BoardRow): string {
	if (!row.unreachable) return "";
	return `unreachable since ${clockTime(row.unreachable.since)}: ${clean(row.unreachable.reason)}`;
}

/** "2/3 of set-…, forked from <id>": the row's place in its attempt set. */
export function attemptText(attempt: AttemptInfo): string {
	return `${attempt.index}/${attempt.count} of ${attempt.setId}${attempt.forkOf ? `, forked from ${attempt.forkOf}` : ""}`;
}

/** "into main as <commit>": where a merged row went. */
export function mergedText(merged: MergedInfo): string {
	return `into ${clean(merged.into)} as ${merged.commit.slice(0, 12)}`;
}

/** What the agent is doing now, apart from the text it streams; "" when nothing else is live. Ages tick with `now`. */
export function liveActivity(row: BoardRow, now: number): string {
	const live = row.live;
	if (!live) return "";
	if (live.retry) return `retrying ${live.retry.attempt}/${live.retry.max}: ${clean(live.retry.reason)}`;
	if (live.compactingSince !== undefined) return `compacting ${formatAge(now - live.compactingSince)}`;
	if (live.tool)
		return `${clean(live.tool.name)} ${formatAge(now - live.tool.startedAt)}${live.tool.detail ? `: ${clean(live.tool.detail)}` : ""}`;
	if (live.waitingSince !== undefined) return `waiting for the model ${formatAge(now - live.waitingSince)}`;
	return "";
}

/** The live line: the activity, else the streamed text. */
export function liveLine(row: BoardRow, now: number): string {
	return liveActivity(row, now) || clean(row.live?.text);
}

/**
 * The runner keeps the last LIVE_TEXT_CHARS characters of a streaming reply, so a full tail starts
 * mid-word: drop that partial word and mark the cut with "…".
 */
export function liveTail(text: string | undefined): string {
	const tail = cleanBlock(text);
	if (tail.length < LIVE_TEXT_CHARS - 8) return tail;
	const cut = tail.search(/\s/);
	return cut >= 0 ? `…${tail.slice(cut).trimStart()}` : tail;
}

/**
 * The newest words of `text` within `width` columns: a live reply grows at its end, so what fits is
 * its end, cut at a word and marked "…".
 */
export function fitTail(text: string, width: number): string {
	if (width <= 0) return "";
	if (visibleWidth(text) <= width) return text;
	if (width === 1) return "…";
	let start = Math.max(0, text.length - width * 2);
	while (start < text.length && visibleWidth(text.slice(start)) > width - 1) start += 1;
	const rest = text.slice(start);
	const space = rest.indexOf(" ");
	// Start at a word when one begins within the first third; a single long word is cut as is.
	const word = space >= 0 && space < Math.max(4, Math.floor(width / 3)) ? rest.slice(space + 1) : rest;
	return truncateToWidth(`…${word}`, width, "");
}

/**
 * The engine's summary is the first sentence of the answer; the list shows as much as fits, so use
 * the whole answer when the summary is its start.
 */
export function fullSummary(row: BoardRow): string {
	const summary = clean(row.summary);
	const answer = clean(row.latestAssistant);
	if (answer && summary && answer.startsWith(summary.replace(/[.!?…]+$/, ""))) return answer;
	return summary;
}

/** The summary column in two parts: `head` is read from its start, `tail` (a live reply) from its end. */
export interface SummaryParts {
	head: string;
	tail: string;
}

/** The question, what the agent is doing and saying now, why it waits, or what it did. */
export function summaryParts(row: BoardRow, now: number): SummaryParts {
	if (row.state === "needs_input" && row.question) {
		const options = row.questionOptions?.length ? ` [${row.questionOptions.map(clean).join(" / ")}]` : "";
		return { head: `${clean(row.question)}${options}`, tail: "" };
	}
	// A target that cannot be reached is why nothing moves: say so first; the run goes on there.
	if (row.unreachable) return { head: unreachableText(row), tail: "" };
	if (row.state === "working" || row.state === "queued") {
		if (row.errorCode === "disk-full") return { head: clean(row.summary), tail: "" };
		const activity = liveActivity(row, now);
		const text = clean(row.live?.text);
		if (text) return { head: activity ? `${activity} · ` : "", tail: text };
		if (activity) return { head: activity, tail: "" };
		if (row.state === "queued" && row.blockedReason)
			return { head: `blocked: ${clean(row.blockedReason)}`, tail: "" };
		if (row.currentTool) return { head: clean(row.currentTool), tail: "" };
	}
	return { head: fullSummary(row), tail: "" };
}

export function summaryText(row: BoardRow, now: number): string {
	const parts = summaryParts(row, now);
	return parts.head + parts.tail;
}

/** Head and newest-words tail of a summary within `width` columns. */
export function fitSummary(parts: SummaryParts, width: number): string {
	if (!parts.tail) return truncateToWidth(parts.head, width, "…");
	// The head (the tool now running) gets at most half; the newest words get the rest.
	const head =
		visibleWidth(parts.head) <= Math.floor(width / 2)
			? parts.head
			: truncateToWidth(parts.head, Math.floor(width / 2), "… ");
	return head + fitTail(parts.tail, width - visibleWidth(head));
}

/** Merge and overlap state, ahead of the summary so no width hides it. */
export function attemptTags(row: BoardRow, overlaps: readonly FileOverlap[] | undefined = row.overlaps): string {
	if (row.merged) return `[merged → ${clean(row.merged.into)}] `;
	if (overlaps?.length) return `[overlap: ${overlaps.map((o) => clean(o.file)).join(", ")}] `;
	return "";
}

export interface RowCounts {
	rows: number;
	archived: number;
	waiting: number;
	running: number;
}

/** Which count a row adds to: the one definition behind the footer, the strip and the board header. */
export function countKey(row: BoardRow): keyof RowCounts {
	if (row.archived) return "archived";
	if (row.state === "needs_input") return "waiting";
	if (row.alive || row.state === "working") return "running";
	return "rows";
}

export function countRows(rows: Iterable<BoardRow>): RowCounts {
	const counts: RowCounts = { rows: 0, archived: 0, waiting: 0, running: 0 };
	for (const row of rows) addCount(counts, row, 1);
	return counts;
}

/** `rows` counts every unarchived row; the other keys count their kind. */
export function addCount(counts: RowCounts, row: BoardRow, sign: 1 | -1): void {
	const key = countKey(row);
	counts[key] += sign;
	if (key !== "archived" && key !== "rows") counts.rows += sign;
}
