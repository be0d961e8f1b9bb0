// Who owns a run right now, read from its files: the queue (an entry waits for it), a claimer starting it
// (claim.json younger than the start grace, or a run dispatched a moment ago, or a process of the run
// still there after the grace: a runner slow to start on a busy machine), its runner or link (runner.json,
// its pid's start time verified), or nobody.
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { isAlive, runProcesses } from "../store/proc.mjs";
import { readProcessFile } from "../store/safe-read.mjs";
import { queuedEntryName, queueSteps } from "./queue.mjs";
import { runEnded } from "./state-rules.mjs";

/** A claimed run gets this long for its runner to record itself before it counts as never started. */
export const RUNNER_START_GRACE_MS = 15_000;

/** @typedef {"queue" | "starting" | "runner" | "none"} RunOwner */

/** @param {string} path */
function mtime(path) {
	try {
		return statSync(path).mtimeMs;
	} catch {
		return 0;
	}
}

/** Whether the run's runner (or link) runs: its record, and its pid's start time. @param {string} runDir */
export function ownerAlive(runDir) {
	const record = readProcessFile(join(runDir, "runner.json"));
	return !!record && isAlive(record.pid, record.start);
}

/**
 * @param {string} storeRoot @param {string} runDir @param {import("./state-rules.mjs").RunStatus} status @param {number} [now]
 * @returns {RunOwner}
 */
export function runOwner(storeRoot, runDir, status, now = Date.now()) {
	if (runEnded(status)) return "none";
	if (ownerAlive(runDir)) return "runner";
	if (existsSync(join(runDir, "runner.json"))) return "none";
	// The entry first, then the claim it is renamed to, then the entry again (a claim that went back, or
	// a dead claimer's run put back): a run moving between them is always found in one.
	if (queuedEntryName(storeRoot, status.runId)) return "queue";
	queueSteps.at("owner", status.runId);
	const claim = join(runDir, "claim.json");
	if (existsSync(claim)) {
		if (now - mtime(claim) < RUNNER_START_GRACE_MS) return "starting";
		// Past the grace, a process carrying the run's tag (spawned, not yet recorded) is still its start.
		return runProcesses(status.runId).length > 0 ? "starting" : "none";
	}
	if (queuedEntryName(storeRoot, status.runId)) return "queue";
	// Dispatched a moment ago and not yet in the queue listing we read.
	return now - status.createdAt < RUNNER_START_GRACE_MS ? "starting" : "none";
}
