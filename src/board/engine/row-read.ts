/**
 * Reading a row: its meta and its current run's status, shape-checked, merged into the row every
 * consumer sees. A run whose owner is gone is recorded as ended on the way (once, under the row lock).
 */
import { existsSync } from "node:fs";
import { diedEnd, endedStatus } from "../../../runner/life/run-end.mjs";
import { runEnded } from "../../../runner/life/state-rules.mjs";
import type { EngineContext } from "./engine-context.ts";
import { BoardError } from "../../../runner/life/reasons.mjs";
import { validateId } from "./ids.ts";
import { settleMergeIntent } from "./merge-intent.ts";
import { recordOrphanEnd, runOwner } from "./run-liveness.ts";
import { errorReason, errorRow, FileCache, readMeta, readStatus, rowFrom } from "./store.ts";
import { respawnLink } from "../targets/link-respawn.ts";
import type { BoardRow, RowMeta, RunStatus } from "./types.ts";

/** `whole` false: an ended run's events, stderr tail, receipts and whole answer may be left out (list lines). */
export function readRow(ctx: EngineContext, id: string, whole = true): BoardRow {
	const { paths, cache, storeDir } = ctx;
	let meta: RowMeta;
	try {
		meta = settleMergeIntent(ctx, id, readMeta(paths, id, cache));
	} catch (error) {
		return errorRow(paths, id, errorReason(error, "meta.json"));
	}
	const runDir = paths.run(id, meta.currentRunId);
	let status: RunStatus;
	try {
		status = readStatus(runDir, cache, whole);
	} catch (error) {
		return { ...errorRow(paths, id, errorReason(error, "status.json"), meta), runDir };
	}
	let owner = runOwner(storeDir, runDir, status);
	if (owner === "none" && !runEnded(status)) {
		try {
			// A target run goes on at the target when its link dies: a new link takes it over.
			const orphan = () => runOwner(storeDir, runDir, readStatus(runDir, new FileCache())) === "none";
			if (!meta.target || !respawnLink(ctx, paths.row(id), runDir, meta.target, orphan)) {
				status = endedStatus(status, diedEnd(runDir));
				void recordOrphanEnd(storeDir, runDir, "died").catch(() => undefined);
			}
		} catch {
			// A read-only or full store cannot record the death now; the next read tries again.
		}
		owner = runOwner(storeDir, runDir, status);
	}
	const row = rowFrom(meta, status, owner === "runner" || owner === "starting");
	// Rows with a live or queued run are the ones the safety poll re-checks.
	if (row.alive || owner === "queue") ctx.liveRows.set(id, ctx.liveRows.get(id) ?? `${row.state}:${row.alive}:`);
	row.runDir = runDir;
	const blocked = ctx.queueBlocked();
	if (owner === "queue" && blocked) row.blockedReason = blocked;
	// A live run on a full disk cannot record what it does: the row says why it looks stuck.
	const full = (row.alive || owner === "queue") && ctx.diskFull();
	if (full) {
		row.errorCode = "disk-full";
		row.blockedReason = full;
		row.summary = row.alive ? "Disk full: the run goes on and records itself when space returns" : "Disk full: starts when space returns";
	}
	return row;
}

/** meta.json of an existing row; "no such row" when its directory is absent. */
export function requireMeta(ctx: EngineContext, id: string): RowMeta {
	validateId(id);
	if (!existsSync(ctx.paths.row(id))) throw new BoardError("no-such-row", `no such row: ${id}`);
	return readMeta(ctx.paths, id, ctx.cache);
}
