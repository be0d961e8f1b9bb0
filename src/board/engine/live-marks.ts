/**
 * The live summary: live/<rowId> marks every row that may count in the footer and strip (a run not
 * over, or a question not answered), so pi's start-up counts are a readdir of live/ plus one read per
 * live row, never a pass over the store. A mark is a hint, never the truth: readers read the marked
 * rows themselves (row-read.ts liveRows). Marks are created by the launcher as a run starts (every run
 * starts there) and by unarchive; the settle step removes one under the row lock once its row no
 * longer counts, and gives a store from before live/ its marks in one full pass (live/.seeded says the
 * marks are complete).
 */
import { existsSync, readdirSync, rmSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { notOver } from "../../../runner/life/phase.mjs";
import { runEnded } from "../../../runner/life/state-rules.mjs";
import { ensureDir, writeFileAtomic } from "../../../runner/store/fs-util.mjs";
import { tryLockRow } from "../../../runner/store/row-lock.mjs";
import { isValidId } from "./ids.ts";
import type { StorePaths } from "./paths.ts";
import { FileCache, readMeta, readStatus } from "./store.ts";
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

/** Whether the marks are complete (a new store's are; an older store's once seeded). */
export function liveSeeded(root: string): boolean {
	return existsSync(join(liveDirOf(root), SEEDED));
}

/** The marks are complete: a new store has nothing to seed, an older one was seeded by a full pass. */
export function seedEmptyLive(root: string): void {
	ensureDir(liveDirOf(root));
	writeFileAtomic(join(liveDirOf(root), SEEDED), "");
}

/** Whether a row still counts, from its files: its run is not over, or it asks a question nobody archived. */
export function keepsMark(meta: Pick<RowMeta, "archived">, status: Pick<RunStatus, "endedAt" | "state">): boolean {
	return !runEnded(status as RunStatus) || (!meta.archived && status.state === "needs_input");
}

/** Whether a row as read counts (an unreadable row does: what it is cannot be told, and it shows as an error). */
export function rowCounts(row: BoardRow): boolean {
	return row.state === "error" || notOver(row) || (!row.archived && row.state === "needs_input");
}

/** Removes a mark under the row lock, after reading the row's files again (a new run may have started). */
export function clearMark(paths: StorePaths, id: string): void {
	const path = join(liveDirOf(paths.root), id);
	const rowDir = paths.row(id);
	if (!existsSync(rowDir)) {
		rmSync(path, { force: true });
		return;
	}
	const release = tryLockRow(rowDir);
	// Someone holds the row: the next pass clears the mark.
	if (!release) return;
	try {
		const cache = new FileCache();
		const meta = readMeta(paths, id, cache);
		if (!keepsMark(meta, readStatus(paths.run(id, meta.currentRunId), cache))) unlinkSync(path);
	} catch {
		// Unreadable now: the mark stays until the row can be told.
	} finally {
		release();
	}
}
