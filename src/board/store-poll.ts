/**
 * What inotify cannot see. A runner killed with SIGKILL changes no file, so rows whose run was live
 * at the last look are re-checked; rows appearing or vanishing show in one readdir. The whole store
 * is hashed only every FULL_CHECK_EVERY polls, so an idle board's cost does not grow with its rows.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { runEnded } from "../../runner/state-rules.mjs";
import type { EngineContext } from "./engine-context.ts";
import { readRow } from "./row-read.ts";
import { runOwner } from "./run-liveness.ts";
import { errorReason, listRowIds, readMeta, readStatus } from "./store.ts";

/** Safety polls between full store hashes (a missed inotify event is picked up within this many polls). */
const FULL_CHECK_EVERY = 6;

/** Per-row change key from the cached reads' stat keys (and liveness, which changes no file). */
function rowKeys(ctx: EngineContext): Map<string, string> {
	const { paths, cache } = ctx;
	const keys = new Map<string, string>();
	for (const id of listRowIds(paths)) {
		let key = "";
		let statusPath = "";
		try {
			const current = readMeta(paths, id, cache);
			const runDir = paths.run(id, current.currentRunId);
			statusPath = join(runDir, "status.json");
			const status = readStatus(runDir, cache);
			// A SIGKILLed runner changes no file; its liveness must still change the key.
			if (!runEnded(status)) key += runOwner(ctx.storeDir, runDir, status);
		} catch (error) {
			key += errorReason(error, id);
		}
		key += `|${cache.keyOf(paths.meta(id))}`;
		if (statusPath) key += `|${cache.keyOf(statusPath)}`;
		keys.set(id, key);
	}
	return keys;
}

/** Cheap change detector: changes whenever any row's files (or a run's liveness) change. */
export function storeVersion(ctx: EngineContext): string {
	const hash = createHash("sha1");
	for (const [id, key] of rowKeys(ctx)) hash.update(`${id}\0${key}\0`);
	return hash.digest("hex").slice(0, 16);
}

/** The safety poll behind the store watch: each call returns the ids of rows that changed unseen. */
export function safetyPoll(ctx: EngineContext): () => Promise<string[]> {
	const live = ctx.liveRows;
	let polls = 0;
	let knownIds = new Set<string>();
	let lastKeys = new Map<string, string>();
	const look = (id: string, present: boolean) => (present ? readRow(ctx, id) : undefined);

	return async () => {
		ctx.tryInit();
		try {
			ctx.pump();
		} catch {
			// Reported on the rows by the next read.
		}
		const ids = listRowIds(ctx.paths);
		const current = new Set(ids);
		const changed = new Set<string>();
		if (polls++ === 0) {
			// Subscribers read the whole board when they subscribe: the first poll only sets the baseline.
			knownIds = current;
			lastKeys = rowKeys(ctx);
			for (const id of [...live.keys()]) {
				const row = look(id, current.has(id));
				if (row && (row.alive || row.state === "queued")) live.set(id, `${row.state}:${row.alive}`);
				else live.delete(id);
			}
			return [];
		}
		for (const id of ids) if (!knownIds.has(id)) changed.add(id);
		for (const id of knownIds) if (!current.has(id)) changed.add(id);
		knownIds = current;
		for (const [id, before] of live) {
			const row = look(id, current.has(id));
			const now = row ? `${row.state}:${row.alive}` : "gone";
			if (now !== before) changed.add(id);
			if (!row || (!row.alive && row.state !== "queued")) live.delete(id);
			else live.set(id, now);
		}
		if (polls % FULL_CHECK_EVERY === 0) {
			const next = rowKeys(ctx);
			for (const [id, key] of next) if (lastKeys.get(id) !== key) changed.add(id);
			lastKeys = next;
		}
		return [...changed];
	};
}
