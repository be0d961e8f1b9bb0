/**
 * Pure view-model of the dashboard list: grouping, ordering, filtering and one-line row text.
 * No I/O and no theme here, so it is cheap to test and to run on every keypress.
 */
import { basename } from "node:path";
import { visibleWidth } from "@earendil-works/pi-tui";
import type { BoardRow, DiffStats, RowState } from "../types.ts";
import { clean, fit } from "./ui-types.ts";

/** Needs input first: it is the only state where the board waits on the user. */
export const STATE_ORDER: readonly RowState[] = ["needs_input", "working", "queued", "failed", "error", "stopped", "completed", "idle"];

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

export interface ParsedFilter {
	states: RowState[];
	words: string[];
}

/** `s:<state>` (prefix match, e.g. `s:need`) narrows by state; every other word must appear in the row. */
export function parseFilter(text: string): ParsedFilter {
	const states: RowState[] = [];
	const words: string[] = [];
	for (const token of text.toLowerCase().split(/\s+/)) {
		if (!token) continue;
		if (token.startsWith("s:")) {
			const prefix = token.slice(2).replace(/-/g, "_");
			for (const state of STATE_ORDER) if (prefix && state.startsWith(prefix) && !states.includes(state)) states.push(state);
			// An unknown state matches nothing rather than everything: the user asked for a narrower list.
			if (!STATE_ORDER.some((state) => prefix && state.startsWith(prefix))) states.push("__none__" as RowState);
			continue;
		}
		words.push(token);
	}
	return { states, words };
}

export function rowMatches(row: BoardRow, filter: ParsedFilter): boolean {
	if (filter.states.length > 0 && !filter.states.includes(row.state)) return false;
	if (filter.words.length === 0) return true;
	const hay = [row.id, row.name, row.summary, row.cwd, row.repo ?? "", row.model ?? "", row.question ?? "", row.branch ?? ""].join("\n").toLowerCase();
	return filter.words.every((word) => hay.includes(word));
}

export type ListItem = { kind: "header"; label: string; count: number } | { kind: "row"; row: BoardRow };

export interface ViewOptions {
	filter?: string;
	showArchived?: boolean;
}

/** Pinned rows form their own group at the top, then one group per state in STATE_ORDER. */
export function buildListItems(rows: readonly BoardRow[], options: ViewOptions = {}): ListItem[] {
	const filter = parseFilter(options.filter ?? "");
	const visible = rows.filter((row) => (options.showArchived ? true : !row.archived) && rowMatches(row, filter));
	const newestFirst = (a: BoardRow, b: BoardRow) => b.lastActivityAt - a.lastActivityAt || a.id.localeCompare(b.id);
	const items: ListItem[] = [];
	const pinned = visible.filter((row) => row.pinned).sort(newestFirst);
	if (pinned.length > 0) {
		items.push({ kind: "header", label: "Pinned", count: pinned.length });
		for (const row of pinned) items.push({ kind: "row", row });
	}
	for (const state of STATE_ORDER) {
		const group = visible.filter((row) => !row.pinned && row.state === state).sort(newestFirst);
		if (group.length === 0) continue;
		items.push({ kind: "header", label: STATE_LABEL[state], count: group.length });
		for (const row of group) items.push({ kind: "row", row });
	}
	return items;
}

export function rowItems(items: readonly ListItem[]): BoardRow[] {
	const rows: BoardRow[] = [];
	for (const item of items) if (item.kind === "row") rows.push(item.row);
	return rows;
}

export function isUnread(row: BoardRow): boolean {
	return row.lastActivityAt > (row.lastViewedAt ?? 0);
}

export function formatAge(ms: number): string {
	// An age of decades comes from time 0 (a time nobody recorded): it is unknown, not 20790 days.
	if (!Number.isFinite(ms) || ms > 30 * 365 * 86_400_000) return "?";
	const s = Math.max(0, Math.floor(ms / 1000));
	if (s < 60) return `${s}s`;
	const m = Math.floor(s / 60);
	if (m < 60) return `${m}m`;
	const h = Math.floor(m / 60);
	if (h < 48) return `${h}h`;
	return `${Math.floor(h / 24)}d`;
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


/** What the agent is doing now, from the engine's live view; "" when nothing is live. Ages tick with `now`. */
export function liveLine(row: BoardRow, now: number): string {
	const live = row.live;
	if (!live) return "";
	if (live.retry) return `retrying ${live.retry.attempt}/${live.retry.max}: ${clean(live.retry.reason)}`;
	if (live.compactingSince !== undefined) return `compacting ${formatAge(now - live.compactingSince)}`;
	if (live.tool) return `${clean(live.tool.name)} ${formatAge(now - live.tool.startedAt)}${live.tool.detail ? `: ${clean(live.tool.detail)}` : ""}`;
	if (live.waitingSince !== undefined) return `waiting for the model ${formatAge(now - live.waitingSince)}`;
	return live.text ? clean(live.text) : "";
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

/** The summary column: the question, what the agent is doing now, why it waits, or what it did. */
export function summaryText(row: BoardRow, now: number): string {
	if (row.state === "needs_input" && row.question) {
		const options = row.questionOptions?.length ? ` [${row.questionOptions.map(clean).join(" / ")}]` : "";
		return `${clean(row.question)}${options}`;
	}
	if (row.state === "working" || row.state === "queued") {
		if (row.errorCode === "disk-full") return clean(row.summary);
		const live = liveLine(row, now);
		const text = row.live?.text ? clean(row.live.text) : "";
		// Tool/wait lines are short; the streamed text tail after them says what the agent is saying.
		if (live && text && live !== text) return `${live} · ${text.slice(-200)}`;
		if (live) return live;
		if (row.state === "queued" && row.blockedReason) return `blocked: ${clean(row.blockedReason)}`;
		if (row.currentTool) return clean(row.currentTool);
	}
	return fullSummary(row);
}

/** Merge and overlap state, ahead of the summary so no width hides it. */
export function attemptTags(row: BoardRow): string {
	if (row.merged) return `[merged → ${clean(row.merged.into)}] `;
	if (row.overlaps?.length) return `[overlap: ${row.overlaps.map((o) => clean(o.file)).join(", ")}] `;
	return "";
}

export interface RowLineParts {
	marker: string;
	glyph: string;
	name: string;
	summary: string;
	/** Right-hand slots in display order (SLOTS), "" when empty. */
	right: string[];
}

/** Right-hand slots in display order, and the order they are given room in (age first, diff last). */
export const SLOTS = ["archived", "age", "usage", "diff", "model", "location"] as const;
const SLOT_PRIORITY = [1, 5, 4, 0, 2, 3];
const RIGHT_ALIGNED = [false, true, true, true, false, false];

export interface LineContext {
	home?: string;
	/** Row whose session this pi is attached to: marked "@". */
	attachedId?: string;
	/** Diff stats from the UI's async cache (the engine no longer computes them in list). */
	diff?: (row: BoardRow) => DiffStats | undefined;
}

export function rowLineParts(row: BoardRow, now: number, context: LineContext = {}): RowLineParts {
	const { home, attachedId } = context;
	// The last path segment is what tells rows apart; the full path is in peek.
	const location = row.worktreePath ? `wt:${row.branch ?? basename(row.worktreePath)}` : basename(shortPath(row.repo ?? row.cwd, home)) || "/";
	return {
		marker: row.id === attachedId ? "@" : isUnread(row) ? "*" : " ",
		glyph: STATE_GLYPH[row.state],
		name: clean(row.name),
		summary: `${attemptTags(row)}${summaryText(row, now)}`,
		right: [row.archived ? "[archived]" : "", formatAge(now - row.lastActivityAt), formatUsage(row), formatDiff(row, context.diff ? context.diff(row) : row.diff), clean(row.modelUsed ?? row.model), clean(location)],
	};
}

/** Column widths shared by all visible rows, so names, summaries and right slots line up. */
export interface RowLayout {
	name: number;
	right: number[];
}

export function rowLayout(parts: readonly RowLineParts[]): RowLayout {
	const layout: RowLayout = { name: 0, right: SLOTS.map(() => 0) };
	for (const p of parts) {
		layout.name = Math.max(layout.name, visibleWidth(p.name));
		p.right.forEach((slot, i) => {
			layout.right[i] = Math.max(layout.right[i] ?? 0, visibleWidth(slot));
		});
	}
	// Age changes while the board is open; reserve its widest short form.
	layout.right[1] = Math.max(layout.right[1] ?? 0, 3);
	return layout;
}

function pad(text: string, width: number, right: boolean): string {
	const cut = fit(text, width);
	if (!right) return cut;
	const trimmed = cut.trimEnd();
	return " ".repeat(Math.max(0, width - visibleWidth(trimmed))) + trimmed;
}

/**
 * One list line within `width` columns: `<marker><glyph> <name> <summary> <right...>`. Columns grow
 * with the width; right slots get room in priority order (age, location, model, usage, diff) while the
 * summary keeps at least a third of the line, so one row's optional column never pushes another's off.
 */
export function formatRowLine(parts: RowLineParts, width: number, layout: RowLayout = rowLayout([parts])): { head: string; name: string; summary: string; right: string } {
	const head = `${parts.marker}${parts.glyph} `;
	let rest = Math.max(0, width - visibleWidth(head));
	const nameWidth = Math.min(Math.max(1, layout.name), Math.max(8, Math.floor(rest * 0.3)), rest);
	const name = fit(parts.name, nameWidth);
	rest -= nameWidth;
	const slotCap = Math.max(16, Math.floor(width * 0.15));
	const minSummary = Math.max(12, Math.floor(width / 3));
	const chosen = new Set<number>();
	let rightWidth = 0;
	for (const i of SLOT_PRIORITY) {
		const slotWidth = Math.min(layout.right[i] ?? 0, slotCap);
		if (slotWidth === 0) continue;
		if (rest - rightWidth - (slotWidth + 2) < minSummary + 1) continue;
		chosen.add(i);
		rightWidth += slotWidth + 2;
	}
	let rightText = "";
	for (let i = 0; i < SLOTS.length; i++) {
		if (chosen.has(i)) rightText += `  ${pad(parts.right[i] ?? "", Math.min(layout.right[i] ?? 0, slotCap), RIGHT_ALIGNED[i] ?? false)}`;
	}
	const summaryWidth = Math.max(0, rest - rightWidth - (rest > 0 ? 1 : 0));
	const summary = summaryWidth > 0 ? ` ${fit(parts.summary, summaryWidth)}` : "";
	return { head: visibleWidth(head) <= width ? head : fit(head, width), name, summary, right: rightText };
}
