/**
 * Changing meta.json: only under the row lock (runner/store/row-lock.mjs), by temp + rename, so two pi
 * processes never lose each other's change; every change touches the row's notify file.
 */
import { existsSync } from "node:fs";
import { touchNotify } from "../../../runner/store/fs-util.mjs";
import { withRowLock } from "../../../runner/store/row-lock.mjs";
import type { EngineContext } from "./engine-context.ts";
import { BoardError } from "../../../runner/life/reasons.mjs";
import { validateId } from "./ids.ts";
import { requireMeta } from "./row-read.ts";
import { describeFsError } from "./store-guard.ts";
import { writeMeta } from "./store.ts";
import type { RowMeta } from "./types.ts";
import { inert } from "./sanitize.ts";

export interface MetaUpdates {
	/** Takes the row lock, changes meta, releases. */
	update(id: string, change: (meta: RowMeta) => void): Promise<void>;
	/** The change for a caller that already holds the row lock. */
	changeLocked(id: string, change: (meta: RowMeta) => void): void;
	/** Runs `fn` holding the row lock (merge must not race a reply, resume or another merge). */
	withLock<T>(id: string, fn: () => T | Promise<T>, timeoutMs?: number): Promise<T>;
}

export function metaUpdates(ctx: EngineContext): MetaUpdates {
	function changeLocked(id: string, change: (meta: RowMeta) => void): void {
		const meta = { ...requireMeta(ctx, id) };
		change(meta);
		meta.updatedAt = Date.now();
		writeMeta(ctx.paths, meta);
		touchNotify(ctx.storeDir, id);
	}

	return {
		changeLocked,
		async update(id, change) {
			validateId(id);
			try {
				await withRowLock(ctx.paths.row(id), () => changeLocked(id, change));
			} catch (error) {
				throw describeFsError(error, (error as NodeJS.ErrnoException).path ?? ctx.paths.meta(id), "cannot write");
			}
		},
		withLock(id, fn, timeoutMs) {
			validateId(id);
			if (!existsSync(ctx.paths.row(id))) throw new BoardError("no-such-row", `no such row: ${inert(id)}`);
			return withRowLock(ctx.paths.row(id), fn, timeoutMs === undefined ? {} : { timeoutMs });
		},
	};
}
