/**
 * What inotify cannot see, at a cost that does not grow with the store; a pass only reads (the tick's
 * settle step writes what reads found). Every pass:
 * - rows whose run was live or queued at the last look are re-read (a runner killed with SIGKILL, or
 *   a full disk, changes no file);
 * - rows appearing or vanishing: rows/ is listed only when its mtime moved (one lstat otherwise);
 * - a watch that stopped delivering: writers replace notify/<rowId> by rename, which moves notify/'s
 *   mtime. When notify/ moved since the last pass and the watch delivered nothing meanwhile (or there is
 *   no watch), only then notify/ is listed and the rows whose file changed since the last pass are
 *   reported. A live watch delivering events costs nothing here.
 * An idle pass is therefore a few lstats plus one read per live row; nothing hashes the whole store.
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { notOver } from "../../../runner/life/phase.mjs";
import { runOwner } from "../../../runner/life/run-owner.mjs";
import { runEnded } from "../../../runner/life/state-rules.mjs";
import type { EngineContext } from "./engine-context.ts";
import { isValidId } from "./ids.ts";
import { readRow } from "./row-read.ts";
import { errorReason, listRowIds, readMeta, readStatus } from "./store.ts";

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
			const status = readStatus(runDir, cache, false);
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

/** On-demand change detector (service.version()): changes whenever any row's files or a run's liveness change. Reads every row. */
export function storeVersion(ctx: EngineContext): string {
	const hash = createHash("sha1");
	for (const [id, key] of rowKeys(ctx)) hash.update(`${id}\0${key}\0`);
	return hash.digest("hex").slice(0, 16);
}

function mtimeOf(path: string): number {
	try {
		return lstatSync(path).mtimeMs;
	} catch {
		return -1;
	}
}

/** Rows whose notify/ file changed after `since` (only when the watch missed an event). */
function notifiedSince(ctx: EngineContext, since: number): string[] {
	const dir = join(ctx.storeDir, "notify");
	let names: string[];
	try {
		names = readdirSync(dir);
	} catch {
		return [];
	}
	return names.filter((name) => isValidId(name) && mtimeOf(join(dir, name)) >= since);
}

export interface SafetyPollInput {
	/** Events the fs.watch delivered since the last pass (undefined: no watch). */
	delivered: number | undefined;
}

/** File times are kernel-tick coarse (a jiffy, <= 10 ms): a file changed just before a pass is not missed. */
const MTIME_SLACK_MS = 50;

/** The safety pass behind the store watch: each call returns the ids of rows that changed unseen. */
export function safetyPoll(
	ctx: EngineContext,
	reads?: { liveIds?: () => Iterable<string> },
): (input?: SafetyPollInput) => Promise<string[]> {
	const live = ctx.liveRows;
	let first = true;
	let knownIds = new Set<string>();
	let rowsMtime = -1;
	let notifyMtime = -1;
	let lastPassAt = 0;
	const keyOf = (row: ReturnType<typeof readRow> | undefined) =>
		row ? `${row.state}:${row.alive}:${row.errorCode ?? ""}` : "gone";

	return async (input) => {
		const passAt = Date.now();
		const changed = new Set<string>();
		// Rows appearing or vanishing: rows/ changes its mtime when an entry is added or removed.
		const rowsNow = mtimeOf(ctx.paths.rows);
		if (rowsNow !== rowsMtime) {
			rowsMtime = rowsNow;
			const current = new Set(listRowIds(ctx.paths));
			if (!first) {
				for (const id of current) if (!knownIds.has(id)) changed.add(id);
				for (const id of knownIds) if (!current.has(id)) changed.add(id);
			}
			knownIds = current;
		}
		// Marked rows not followed yet (another pi process started them): reported and followed from now
		// on (a mark whose row no longer counts goes in the settle step).
		const adopted = new Set<string>();
		for (const id of reads?.liveIds?.() ?? []) {
			if (live.has(id)) continue;
			const row = knownIds.has(id) ? readRow(ctx, id, false) : undefined;
			if (row && notOver(row)) {
				live.set(id, keyOf(row));
				adopted.add(id);
				if (!first) changed.add(id);
			}
		}
		for (const [id, before] of live) {
			if (adopted.has(id)) continue;
			const row = knownIds.has(id) ? readRow(ctx, id, false) : undefined;
			// A full disk changes no file: its "disk full" must still repaint the row.
			const now = keyOf(row);
			if (!first && now !== before) changed.add(id);
			if (!row || !notOver(row)) live.delete(id);
			else live.set(id, now);
		}
		const notifyNow = mtimeOf(join(ctx.storeDir, "notify"));
		if (notifyNow !== notifyMtime) {
			// notify/ changed and the watch said nothing (or there is none): report the rows notified since the last pass.
			if (!first && !input?.delivered)
				for (const id of notifiedSince(ctx, lastPassAt - MTIME_SLACK_MS)) changed.add(id);
			notifyMtime = notifyNow;
		}
		first = false;
		lastPassAt = passAt;
		return [...changed];
	};
}
