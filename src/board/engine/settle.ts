/**
 * The one place where what reads find is written (docs/engine.md, "Reads are pure"): the queue is
 * pumped; a run nobody owns gets a new link (on a target) or its end recorded, as readers derived it; a
 * merge intent's outcome is recorded; live marks of rows that no longer count go, and a store from
 * before live/ gets its marks; kinds remove what no run owns any more (containers, once a minute). It
 * runs in the board's safety tick and in `list`'s own pump (the subcommand, board_status); dispatch,
 * reply and stop write what they need themselves. A store this process cannot write is left as it is:
 * nothing is written there and no process is started.
 */
import { existsSync } from "node:fs";
import { settleUnowned } from "../../../runner/life/orphan.mjs";
import { nodeCommand } from "./commands.ts";
import type { EngineContext } from "./engine-context.ts";
import { clearMark, liveMarkIds, liveSeeded, markLive, rowCounts, seedEmptyLive } from "./live-marks.ts";
import { settleMergeIntent } from "./merge-intent.ts";
import { inspectRow } from "./row-read.ts";
import { listRowIds } from "./store.ts";

/**
 * One pass; `all`: every row of the store is looked at (list's own pump), not only the rows the tick
 * follows, the marked ones and those a read noted. Returns the ids of rows it changed.
 */
export type Settle = (options?: { all?: boolean }) => Promise<string[]>;

export function settle(ctx: EngineContext, leftovers: { maybe(): void }): Settle {
	const spawnWith = { node: nodeCommand(ctx.env), env: ctx.env };

	async function settleRow(id: string): Promise<boolean> {
		const { row, pending } = inspectRow(ctx, id, false);
		if (!pending) return false;
		if (pending === "merge") return settleMergeIntent(ctx, id);
		if (!row.runDir) return false;
		const outcome = await settleUnowned(ctx.storeDir, row.runDir, {
			...(pending === "relink" && row.target ? { target: row.target } : {}),
			spawnWith,
		});
		return outcome !== "owned";
	}

	return async (options = {}) => {
		if (!ctx.writable()) return [];
		ctx.tryInit();
		const pump = (force: boolean) => {
			try {
				ctx.pump(force);
			} catch {
				// Reported on the rows by the next read.
			}
		};
		pump(false);
		const marked = liveMarkIds(ctx.storeDir);
		const ids = new Set([
			...ctx.liveRows.keys(),
			...ctx.pending.keys(),
			...marked,
			...(options.all ? listRowIds(ctx.paths) : []),
		]);
		const changed: string[] = [];
		for (const id of ids) {
			if (!existsSync(ctx.paths.row(id))) continue;
			try {
				if (await settleRow(id)) changed.push(id);
			} catch {
				// A store that refuses the write (full, or read-only under us): the next pass tries again.
			}
		}
		// Marks: a row that no longer counts loses its own; a store from before live/ gets them, once, from
		// the tick (the footer's and strip's own need: list's pump leaves such a store's files as they are).
		try {
			for (const id of marked)
				if (!existsSync(ctx.paths.row(id)) || !rowCounts(inspectRow(ctx, id, false).row)) clearMark(ctx.paths, id);
			if (!options.all && !liveSeeded(ctx.storeDir)) {
				for (const id of listRowIds(ctx.paths))
					if (rowCounts(inspectRow(ctx, id, false).row)) markLive(ctx.storeDir, id);
				seedEmptyLive(ctx.storeDir);
			}
		} catch {
			// The marks written so far are used; the next pass goes on.
		}
		leftovers.maybe();
		// An end recorded frees its slot: what waits starts now.
		if (changed.length > 0) pump(true);
		return changed;
	};
}
