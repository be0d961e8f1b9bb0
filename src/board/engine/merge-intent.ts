/**
 * A merge killed after the main checkout moved but before meta recorded it leaves `merging` (its
 * intent) in meta.json. The next read or merge of that row asks git whether the checkout moved, then
 * records the merge, or drops the intent when it did not, once, under the row lock. Reads pay for
 * this only for a row that has an intent.
 */
import { touchNotify } from "../../../runner/store/fs-util.mjs";
import { tryLockRow } from "../../../runner/store/row-lock.mjs";
import type { EngineContext } from "./engine-context.ts";
import { intentOutcome } from "../git/merge.ts";
import { readMeta, writeMeta } from "./store.ts";
import type { RowMeta } from "./types.ts";

/** For a caller that holds the row lock. */
export function settleMergeLocked(ctx: EngineContext, id: string): RowMeta {
	const meta = readMeta(ctx.paths, id, ctx.cache);
	if (!meta.merging || !meta.repo) return meta;
	const outcome = intentOutcome(meta.repo, meta.merging);
	if (!outcome) return meta;
	const { merging: _done, ...rest } = meta;
	const next: RowMeta = { ...rest, ...(outcome.merged ? { merged: outcome.merged } : {}), updatedAt: Date.now() };
	writeMeta(ctx.paths, next);
	touchNotify(ctx.storeDir, id);
	return next;
}

/** On a read: settles the intent when the row lock is free (held: the merge itself is still going). */
export function settleMergeIntent(ctx: EngineContext, id: string, meta: RowMeta): RowMeta {
	if (!meta.merging) return meta;
	const release = tryLockRow(ctx.paths.row(id));
	if (!release) return meta;
	try {
		return settleMergeLocked(ctx, id);
	} catch {
		// A read-only store or a vanished repo: the next read tries again.
		return meta;
	} finally {
		release();
	}
}
