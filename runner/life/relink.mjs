// A target run whose link died (killed, the machine restarted) is not a dead run: it goes on at the
// target. A new link takes it over on the run's slot and resumes the mirror where the local files stop;
// its record goes in at once, so the next reader sees an owner. A link that keeps dying is given up
// after a few starts, and the run is ended as its owner's death (docs/engine-targets.md, "The link").
import { existsSync } from "node:fs";
import { join } from "node:path";
import { readJsonObject, writeJsonAtomic } from "../store/fs-util.mjs";
import { safeStatus } from "../store/safe-read.mjs";
import { slotOfRun, slotsOf } from "./slots.mjs";
import { handToLink } from "./target-link-owner.mjs";

/**
 * New links started for one run in a row at most (a link that dies at once every time must not loop
 * forever): a link that reached its far run resets the count (resetRelinks), so a long run outlives any
 * number of board restarts, while links that keep dying before they follow anything end the run within a
 * few supervise passes.
 */
export const MAX_RELINKS = 4;

/** Written by relink only (under the row lock). @param {string} runDir */
const countPath = (runDir) => join(runDir, "link-respawns.json");
/** Written by the run's link only: when a link of it last reached its far run. @param {string} runDir */
const reachedPath = (runDir) => join(runDir, "link-reached.json");

/** New links started since a link last reached the far run. @param {string} runDir */
function relinks(runDir) {
	const counted = readJsonObject(countPath(runDir)) ?? {};
	const reached = readJsonObject(reachedPath(runDir)) ?? {};
	if (typeof reached.at === "number" && typeof counted.at === "number" && reached.at >= counted.at) return 0;
	return Number(counted.count) || 0;
}

/**
 * A link reached its far run: the next death starts the count afresh. Said in a file of the link's
 * own, so the count keeps one writer (a link and a relink at once lose nothing).
 * @param {string} runDir
 */
export function resetRelinks(runDir) {
	if (relinks(runDir) === 0) return;
	try {
		writeJsonAtomic(reachedPath(runDir), { at: Date.now() });
	} catch {
		// Counted from where it was: a few more ends come sooner, never never.
	}
}

/** The pool a run was placed from (run.json /pool), if any. @param {string} runDir */
function poolOf(runDir) {
	const pool = readJsonObject(join(runDir, "run.json"))?.pool;
	return typeof pool === "string" ? pool : undefined;
}

/** Whether a new link may take the run over: its link did run (runner.json), and has not died too often. @param {string} runDir */
export function relinkable(runDir) {
	return existsSync(join(runDir, "runner.json")) && relinks(runDir) < MAX_RELINKS;
}

/**
 * Starts a new link on the run, for a caller holding the row lock that found the run without an
 * owner. Returns false when it cannot (ended, never started, given up): the caller ends the run then.
 * @param {string} storeRoot @param {string} runDir @param {string} target
 * @param {{ node: string, env: NodeJS.ProcessEnv }} spawnWith
 */
export function relink(storeRoot, runDir, target, spawnWith) {
	const status = safeStatus(runDir);
	if (!status || typeof status.endedAt === "number" || !relinkable(runDir)) return false;
	writeJsonAtomic(countPath(runDir), { count: relinks(runDir) + 1, at: Date.now() });
	const runId = String(status.runId);
	const rowId = String(status.rowId);
	const slots = slotsOf(storeRoot, target);
	// Its slot is still held (the run is not over): the target's link takes it over.
	const slot = slotOfRun(slots.dir, runId) ?? join(slots.dir, "slot-none.json");
	const pool = poolOf(runDir);
	handToLink(storeRoot, target, runDir, { rowId, runId, slot, ...(pool ? { pool } : {}) }, spawnWith);
	return true;
}
