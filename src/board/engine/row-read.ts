/**
 * Reading rows: a row's meta and its current run's status, shape-checked, merged into the row every
 * consumer sees. Reads only read (docs/engine.md, "Reads are pure"): a run nobody owns reads as its
 * end at once (runner/life/orphan.mjs derive), a settled merge intent as its outcome, and what is still
 * to be written is noted for the settle step (settle.ts), which writes it.
 */
import { existsSync } from "node:fs";
import { withWords } from "../../../runner/live-words.mjs";
import { derive } from "../../../runner/life/orphan.mjs";
import { notOver } from "../../../runner/life/phase.mjs";
import { BoardError } from "../../../runner/life/reasons.mjs";
import type { EngineContext, Pending } from "./engine-context.ts";
import { validateId } from "./ids.ts";
import { liveMarkIds, liveSeeded, rowCounts } from "./live-marks.ts";
import { settledMeta } from "./merge-intent.ts";
import { runFilesProblem } from "./run-files-check.ts";
import { newestWords } from "./row-words.ts";
import { errorReason, errorRow, listRowIds, readMeta, readStatus, rowFrom } from "./store.ts";
import type { BoardRow, RowMeta, RunStatus } from "./types.ts";
import { inert } from "./sanitize.ts";

/** A row as read, and what the settle step still has to write about it. */
export interface RowRead {
	row: BoardRow;
	pending?: Pending;
}

/** `whole` false: an ended run's events, stderr tail, receipts and whole answer may be left out (list lines). */
export function inspectRow(ctx: EngineContext, id: string, whole = true): RowRead {
	const { paths, cache, storeDir } = ctx;
	let meta: RowMeta;
	let merge = false;
	try {
		const settled = settledMeta(readMeta(paths, id, cache));
		meta = settled.meta;
		merge = settled.changed;
	} catch (error) {
		return noted(ctx, id, { row: errorRow(paths, id, errorReason(error, "meta.json")) });
	}
	const runDir = paths.run(id, meta.currentRunId);
	let read: RunStatus;
	try {
		read = readStatus(runDir, cache, whole);
	} catch (error) {
		return noted(ctx, id, { row: { ...errorRow(paths, id, errorReason(error, "status.json"), meta), runDir } });
	}
	const bad = runFilesProblem(runDir);
	if (bad) return noted(ctx, id, { row: { ...errorRow(paths, id, bad, meta), runDir } });
	const run = derive(storeDir, runDir, read, meta);
	// A live run's newest streamed words are in words.jsonl before its status has them.
	const status = run.alive ? withWords(run.status, newestWords(runDir)) : run.status;
	const row = rowFrom(meta, status, run.alive);
	row.runDir = runDir;
	// Rows whose run is not over are the ones the safety tick follows.
	if (notOver(row)) ctx.liveRows.set(id, ctx.liveRows.get(id) ?? `${row.state}:${row.alive}:`);
	const blocked = ctx.queueBlocked();
	if (run.owner === "queue" && blocked) row.blockedReason = blocked;
	// A live run on a full disk cannot record what it does: the row says why it looks stuck.
	const full = (row.alive || run.owner === "queue") && ctx.diskFull();
	if (full) {
		row.errorCode = "disk-full";
		row.blockedReason = full;
		row.summary = row.alive
			? "Disk full: the run goes on and records itself when space returns"
			: "Disk full: starts when space returns";
	}
	return noted(ctx, id, { row, ...(run.pending ? { pending: run.pending } : merge ? { pending: "merge" } : {}) });
}

/** What is still to be written is noted for the next settle step (in memory only). */
function noted(ctx: EngineContext, id: string, read: RowRead): RowRead {
	if (read.pending) ctx.pending.set(id, read.pending);
	else ctx.pending.delete(id);
	return read;
}

export function readRow(ctx: EngineContext, id: string, whole = true): BoardRow {
	return inspectRow(ctx, id, whole).row;
}

/** meta.json of an existing row; "no such row" when its directory is absent. */
export function requireMeta(ctx: EngineContext, id: string): RowMeta {
	validateId(id);
	if (!existsSync(ctx.paths.row(id))) throw new BoardError("no-such-row", `no such row: ${inert(id)}`);
	return readMeta(ctx.paths, id, ctx.cache);
}

/**
 * The rows that count in the footer and strip: the marked rows, read (O(live rows)). A store whose
 * marks are not complete yet (from before live/; the settle step seeds them) is read whole.
 */
export function liveRows(ctx: EngineContext): BoardRow[] {
	const ids = liveSeeded(ctx.storeDir) ? liveMarkIds(ctx.storeDir) : listRowIds(ctx.paths);
	return ids
		.filter((id) => existsSync(ctx.paths.row(id)))
		.map((id) => readRow(ctx, id, false))
		.filter(rowCounts);
}
