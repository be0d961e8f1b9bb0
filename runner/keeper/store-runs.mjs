// The runs a keeper looks after, read from the store's files alone: the rows the live summary marks
// (live/<id>: a run not over, or a question; every run is marked as it starts), or every row of a store
// whose marks are not complete yet (live/.seeded absent), each with its current run when that run is
// not over.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { readJsonObject } from "../store/fs-util.mjs";
import { safeStatus } from "../store/safe-read.mjs";
import { isValidId, rowDirOf, runDirOf } from "../store/store-layout.mjs";
import { runEnded } from "../life/state-rules.mjs";

/** @param {string} dir @returns {string[]} */
function names(dir) {
	try {
		return readdirSync(dir).filter((name) => !name.startsWith(".") && isValidId(name));
	} catch {
		return [];
	}
}

/** A store without live marks yet is read whole: at most every FULL_SCAN_MS (a big store's every row). */
const FULL_SCAN_MS = 10_000;
/** @type {Map<string, { at: number, ids: string[] }>} */
const fullScans = new Map();

/** Ids of the rows that may have a run not over. @param {string} storeRoot */
export function rowsToWatch(storeRoot) {
	const live = join(storeRoot, "live");
	if (existsSync(join(live, ".seeded"))) return names(live);
	const last = fullScans.get(storeRoot);
	if (last && Date.now() - last.at < FULL_SCAN_MS) return last.ids;
	const ids = names(join(storeRoot, "rows")).filter((rowId) => openRun(storeRoot, rowId));
	fullScans.set(storeRoot, { at: Date.now(), ids });
	return ids;
}

/**
 * The row's current run when it is not over: its directory, status and target. A row whose files
 * cannot be read is left to the readers, which say what is wrong with it.
 * @param {string} storeRoot @param {string} rowId
 * @returns {{ rowId: string, runDir: string, status: import("../life/state-rules.mjs").RunStatus, target?: string } | undefined}
 */
export function openRun(storeRoot, rowId) {
	let meta;
	try {
		meta = readJsonObject(join(rowDirOf(storeRoot, rowId), "meta.json"));
	} catch {
		return undefined;
	}
	const runId = meta?.currentRunId;
	if (typeof runId !== "string" || !isValidId(runId)) return undefined;
	const runDir = runDirOf(storeRoot, rowId, runId);
	let status;
	try {
		status = /** @type {import("../life/state-rules.mjs").RunStatus | undefined} */ (safeStatus(runDir));
	} catch {
		return undefined;
	}
	if (!status || runEnded(status)) return undefined;
	const target = typeof meta?.target === "string" ? meta.target : undefined;
	return { rowId, runDir, status, ...(target ? { target } : {}) };
}

/** Every run of the store not over. @param {string} storeRoot */
export function openRuns(storeRoot) {
	return rowsToWatch(storeRoot).flatMap((rowId) => {
		const run = openRun(storeRoot, rowId);
		return run ? [run] : [];
	});
}
