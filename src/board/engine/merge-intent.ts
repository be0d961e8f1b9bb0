/**
 * A merge killed after the main checkout moved but before meta recorded it leaves `merging` (its
 * intent) in meta.json. A read of that row asks git whether the checkout moved and shows the row as
 * it will be (merged, or not); the settle step and the next merge of the row record it, or drop the
 * intent when nothing moved, once, under the row lock. Reads pay for this only for a row with an intent.
 */
import { touchNotify } from "../../../runner/store/fs-util.mjs";
import { tryLockRow } from "../../../runner/store/row-lock.mjs";
import type { EngineContext } from "./engine-context.ts";
import { intentOutcome } from "./git/merge.ts";
import { readMeta, writeMeta } from "./store.ts";
import type { RowMeta } from "./types.ts";

/** meta as it reads once its merge intent is settled (asks git, writes nothing); `changed`: there is one to record. */
export function settledMeta(meta: RowMeta): { meta: RowMeta; changed: boolean } {
	if (!meta.merging || !meta.repo) return { meta, changed: false };
	const outcome = intentOutcome(meta.repo, meta.merging);
	if (!outcome) return { meta, changed: false };
	const { merging: _done, ...rest } = meta;
	return { meta: { ...rest, ...(outcome.merged ? { merged: outcome.merged } : {}) }, changed: true };
}

/** Records a settled intent, for a caller that holds the row lock. */
export function settleMergeLocked(ctx: EngineContext, id: string): RowMeta {
	const settled = settledMeta(readMeta(ctx.paths, id, ctx.cache));
	if (!settled.changed) return settled.meta;
	const next: RowMeta = { ...settled.meta, updatedAt: Date.now() };
	writeMeta(ctx.paths, next);
	touchNotify(ctx.storeDir, id);
	return next;
}

/** settleMergeLocked when the row lock is free (held: the merge itself may still be going); whether it wrote. */
export function settleMergeIntent(ctx: EngineContext, id: string): boolean {
	const release = tryLockRow(ctx.paths.row(id));
	if (!release) return false;
	try {
		settleMergeLocked(ctx, id);
		return true;
	} finally {
		release();
	}
}
