/**
 * A row as the page gets it: only what it shows, every string from a worker, a model or a store file
 * passed through the board's sanitiser (no control or escape sequences, no bidi overrides). The page
 * still puts all of it in the DOM as text only; this keeps what reaches a phone small and plain.
 */
import type {
	AttemptRowView,
	AttemptSetView,
	BoardRow,
	DiffStats,
	MergePlan,
	Receipt,
} from "../../board/engine/types.ts";
import { notOver } from "../../../runner/life/phase.mjs";
import {
	clean,
	cleanBlock,
	formatUsage,
	fullSummary,
	liveTail,
	STATE_GLYPH,
	STATE_LABEL,
	STATE_ORDER,
	targetOf,
	unreachableText,
} from "../../board/view-model/row-text.ts";

/** The board's groups, in its order: pinned rows first, then one group per state. */
export const GROUPS: readonly string[] = ["Pinned", ...STATE_ORDER.map((state) => STATE_LABEL[state])];

/** Each state's glyph and label, as the board shows them. */
export const STATES: Readonly<Record<string, { glyph: string; label: string }>> = Object.fromEntries(
	STATE_ORDER.map((state) => [state, { glyph: STATE_GLYPH[state], label: STATE_LABEL[state] }]),
);

export interface PageReceipt {
	status: string;
	as?: string;
	code?: string;
	reason?: string;
	preview: string;
	at: number;
}

export interface PageRow {
	id: string;
	name: string;
	state: BoardRow["state"];
	/** Index into GROUPS, as the board groups rows. */
	group: number;
	alive: boolean;
	archived: boolean;
	pinned: boolean;
	unread: boolean;
	lastActivityAt: number;
	updatedAt: number;
	summary: string;
	/** What it does now: the live tool, waiting for the model, a retry or a compaction (ages from the times). */
	live?: {
		tool?: { name: string; detail: string; startedAt: number };
		waitingSince?: number;
		retry?: { attempt: number; max: number; reason: string };
		compactingSince?: number;
	};
	/** The newest words of the reply being streamed. */
	liveText?: string;
	question?: string;
	options?: string[];
	receipts?: PageReceipt[];
	diff?: DiffStats;
	attempt?: { setId: string; index: number; count: number };
	merged?: { into: string; commit: string };
	overlaps?: { file: string; rows: string[] }[];
	target: string;
	model?: string;
	cwd: string;
	repo?: string;
	preset?: string;
	worktree: boolean;
	branch?: string;
	usage?: string;
	error?: string;
	blocked?: string;
	unreachable?: string;
}

/** The row in full (its card opened): events, the whole answer, stderr. */
export interface PageDetail extends PageRow {
	/** A finished local row: the command that opens its session in a terminal (the TUI's attach); a target row: where to attach it. */
	attach?: string;
	answer?: string;
	events: { at: number; text: string }[];
	stderr?: string;
}

/** A word the shell takes as it is. */
function shellQuote(text: string): string {
	return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}

/** An event that says again how the row ended ("failed: <its error>"), which the summary says already. */
function repeatsSummary(text: string, summary: string): boolean {
	const said = text.replace(/^[a-z][a-z ]*: /, "");
	return said.length >= 12 && said !== text && summary.includes(said);
}

/** Whether `summary` already holds the text of `error` (spaces aside). */
export function saysAlready(summary: string, error: string): boolean {
	const said = clean(error);
	return said.length > 0 && summary.includes(said);
}

function receipt(r: Receipt): PageReceipt {
	return {
		status: r.status,
		...(r.as ? { as: r.as } : {}),
		...(r.code ? { code: r.code } : {}),
		...(r.reason ? { reason: clean(r.reason) } : {}),
		preview: clean(r.preview),
		at: r.at,
	};
}

export function pageRow(row: BoardRow, diff: DiffStats | undefined = row.diff): PageRow {
	const out: PageRow = {
		id: row.id,
		name: clean(row.name) || row.id,
		state: row.state,
		group: row.pinned ? 0 : 1 + STATE_ORDER.indexOf(row.state),
		alive: row.alive,
		archived: row.archived,
		pinned: row.pinned,
		unread: row.lastActivityAt > (row.lastViewedAt ?? 0),
		lastActivityAt: row.lastActivityAt,
		updatedAt: row.updatedAt,
		summary: fullSummary(row),
		target: targetOf(row),
		cwd: clean(row.cwd),
		worktree: row.worktreePath !== undefined,
	};
	const live = row.live;
	if (live && (live.tool || live.waitingSince !== undefined || live.retry || live.compactingSince !== undefined)) {
		out.live = {
			...(live.tool
				? { tool: { name: clean(live.tool.name), detail: clean(live.tool.detail), startedAt: live.tool.startedAt } }
				: {}),
			...(live.waitingSince !== undefined ? { waitingSince: live.waitingSince } : {}),
			...(live.retry
				? { retry: { attempt: live.retry.attempt, max: live.retry.max, reason: clean(live.retry.reason) } }
				: {}),
			...(live.compactingSince !== undefined ? { compactingSince: live.compactingSince } : {}),
		};
	}
	if (live?.text) out.liveText = liveTail(live.text);
	if (row.state === "needs_input" && row.question) {
		out.question = cleanBlock(row.question);
		if (row.questionOptions?.length) out.options = row.questionOptions.map(clean);
	}
	if (row.receipts?.length) out.receipts = row.receipts.slice(-5).map(receipt);
	if (diff) out.diff = { added: diff.added, removed: diff.removed, files: diff.files };
	if (row.attempt) out.attempt = { setId: row.attempt.setId, index: row.attempt.index, count: row.attempt.count };
	if (row.merged) out.merged = { into: clean(row.merged.into), commit: row.merged.commit.slice(0, 12) };
	if (row.overlaps?.length) out.overlaps = row.overlaps.map((o) => ({ file: clean(o.file), rows: o.rows }));
	const model = clean(row.modelUsed) || clean(row.model);
	if (model) out.model = model;
	if (row.branch) out.branch = clean(row.branch);
	if (row.repo) out.repo = clean(row.repo);
	if (row.preset) out.preset = clean(row.preset);
	const usage = formatUsage(row);
	if (usage) out.usage = usage;
	// A failed row's summary often is its error ("Failed: cannot start on ..."): said once, not twice.
	if (row.error && !saysAlready(out.summary, row.error)) out.error = cleanBlock(row.error).slice(0, 2000);
	if (row.blockedReason) out.blocked = clean(row.blockedReason);
	if (row.unreachable) out.unreachable = unreachableText(row);
	return out;
}

export function pageDetail(row: BoardRow, diff?: DiffStats): PageDetail {
	const summary = fullSummary(row);
	const out: PageDetail = {
		...pageRow(row, diff),
		events: row.recentEvents
			.slice(-20)
			.map((event) => ({ at: event.at, text: clean(event.text) }))
			.filter((event) => !repeatsSummary(event.text, summary)),
	};
	if (row.latestAssistant) out.answer = cleanBlock(row.latestAssistant);
	if (row.error && !saysAlready(out.summary, row.error)) out.error = cleanBlock(row.error);
	if (row.stderrTail) out.stderr = cleanBlock(row.stderrTail);
	if (!notOver(row) && out.target === "local" && row.sessionFile)
		out.attach = `cd ${shellQuote(clean(row.cwd))} && pi --session ${shellQuote(clean(row.sessionFile))}`;
	// A target row's session here is its link's mirror: the board's attach opens a copy of it, a command cannot.
	else if (!notOver(row) && row.sessionFile)
		out.attach = `o on the board (/agent-board) opens a copy of its session in its worktree here; it ran on ${out.target}`;
	return out;
}

export interface PageAttempt {
	row: PageRow;
	files: string[];
	overlaps: { file: string; rows: string[] }[];
}

export function pageAttempts(
	set: AttemptSetView,
	diff: (row: BoardRow) => DiffStats | undefined,
): { setId?: string; repo?: string; rows: PageAttempt[] } {
	return {
		...(set.setId ? { setId: set.setId } : {}),
		...(set.repo ? { repo: clean(set.repo) } : {}),
		rows: set.rows.map((entry: AttemptRowView) => ({
			row: pageRow(entry.row, diff(entry.row)),
			files: entry.files.map(clean),
			overlaps: entry.overlaps.map((o) => ({ file: clean(o.file), rows: o.rows })),
		})),
	};
}

export function pagePlan(plan: MergePlan): {
	branch: string;
	into: string;
	commits: number;
	files: string[];
	uncommitted: string[];
} {
	return {
		branch: clean(plan.branch),
		into: clean(plan.into),
		commits: plan.commits,
		files: plan.files.map(clean),
		uncommitted: plan.uncommitted.map(clean),
	};
}
