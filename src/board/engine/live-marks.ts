/**
 * The live summary: live/<rowId> marks every row that may count in the footer and strip (a run not
 * ended, or a question not answered), so pi's start-up counts are a readdir of live/ plus one read per
 * live row, never a pass over the store. A mark is a hint, never the truth: readers read the marked
 * rows themselves. Marks are created by the launcher as a run starts (every run starts there) and by
 * unarchive, and removed only under the row lock once the row no longer counts. live/.seeded says the
 * marks are complete: a store from before live/ gets them from one full pass, once.
 */
import { existsSync, readdirSync, rmSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { ensureDir, writeFileAtomic } from "../../../runner/store/fs-util.mjs";
import { tryLockRow } from "../../../runner/store/row-lock.mjs";
import { runEnded } from "../../../runner/life/state-rules.mjs";
import type { EngineContext } from "./engine-context.ts";
import { isValidId } from "./ids.ts";
import { readRow } from "./row-read.ts";
import { FileCache, listRowIds, readMeta, readStatus } from "./store.ts";
import type { BoardRow, RowMeta, RunStatus } from "./types.ts";

const SEEDED = ".seeded";

export const liveDirOf = (root: string): string => join(root, "live");

/** Marks a row live (atomic create; a mark already there stays). */
export function markLive(root: string, id: string): void {
	const dir = liveDirOf(root);
	ensureDir(dir);
	writeFileAtomic(join(dir, id), "");
}

/** Ids of the marked rows (a readdir of live/: O(live rows)). */
export function liveMarkIds(root: string): string[] {
	try {
		return readdirSync(liveDirOf(root)).filter((name) => isValidId(name));
	} catch {
		return [];
	}
}

/** Whether a row still counts: its run is not over, or it asks a question nobody archived. */
export function keepsMark(meta: Pick<RowMeta, "archived">, status: Pick<RunStatus, "endedAt" | "state">): boolean {
	return !runEnded(status as RunStatus) || (!meta.archived && status.state === "needs_input");
}

function rowKeepsMark(row: BoardRow): boolean {
	// An unreadable row keeps its mark: what it is cannot be told, and it is shown as an error until fixed.
	return row.state === "error" || row.alive || row.state === "queued" || (!row.archived && row.state === "needs_input");
}

/** Removes a mark under the row lock, after checking the row's files again (a new run may have started). */
function clearMark(ctx: EngineContext, id: string): void {
	const path = join(liveDirOf(ctx.storeDir), id);
	const rowDir = ctx.paths.row(id);
	if (!existsSync(rowDir)) {
		rmSync(path, { force: true });
		return;
	}
	const release = tryLockRow(rowDir);
	// Someone holds the row: the next read clears the mark.
	if (!release) return;
	try {
		const cache = new FileCache();
		const meta = readMeta(ctx.paths, id, cache);
		if (!keepsMark(meta, readStatus(ctx.paths.run(id, meta.currentRunId), cache))) unlinkSync(path);
	} catch {
		// Unreadable now: the mark stays until the row can be told.
	} finally {
		release();
	}
}

/** A store created now has nothing to seed: its (empty) live summary is complete. */
export function seedEmptyLive(root: string): void {
	ensureDir(liveDirOf(root));
	writeFileAtomic(join(liveDirOf(root), SEEDED), "");
}

/** A marked row just read: its mark goes (under the row lock) when it no longer counts. */
export function settleMark(ctx: EngineContext, id: string, row: BoardRow | undefined): void {
	if (row && rowKeepsMark(row)) return;
	try {
		clearMark(ctx, id);
	} catch {
		// A read-only store keeps the mark; the row is still not counted.
	}
}

/** One full pass for a store from before live/ (once per store): marks every row that counts. */
function seed(ctx: EngineContext): void {
	const dir = liveDirOf(ctx.storeDir);
	for (const id of listRowIds(ctx.paths)) {
		const row = readRow(ctx, id, false);
		if (rowKeepsMark(row)) markLive(ctx.storeDir, id);
	}
	writeFileAtomic(join(dir, SEEDED), "");
}

/** The rows that count in the footer and strip: the marked rows, read; stale marks are removed. */
export function liveRows(ctx: EngineContext): BoardRow[] {
	const dir = liveDirOf(ctx.storeDir);
	let names: string[];
	try {
		names = readdirSync(dir);
	} catch {
		names = [];
	}
	if (!names.includes(SEEDED)) {
		try {
			ensureDir(dir);
			seed(ctx);
			names = readdirSync(dir);
		} catch {
			// A read-only or full store: the marks written so far are used; the next read seeds again.
		}
	}
	const rows: BoardRow[] = [];
	for (const id of names) {
		if (!isValidId(id)) continue;
		if (!existsSync(ctx.paths.row(id))) {
			clearMark(ctx, id);
			continue;
		}
		const row = readRow(ctx, id, false);
		if (rowKeepsMark(row)) rows.push(row);
		else {
			try {
				clearMark(ctx, id);
			} catch {
				// A read-only store keeps the mark; the row is still not counted.
			}
		}
	}
	return rows;
}
