/**
 * Who owns a run right now, and recording the end of a run whose owner died. Readers never write a
 * live run's files: only a run with no owner left (no queue entry, no live runner, past the start
 * grace) is ended here, once, under the row lock, after every process of the run is gone.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { queuedEntryName } from "../../../runner/life/queue.mjs";
import { diedEnd, endOrphan, stoppedEnd } from "../../../runner/life/run-end.mjs";
import { runEnded } from "../../../runner/life/state-rules.mjs";
import { endRunProcesses } from "../../../runner/store/proc.mjs";
import { processAlive, readProcess } from "./store.ts";
import type { RunStatus } from "./types.ts";

/** A claimed run gets this long for its runner to record itself before it counts as never started. */
export const RUNNER_START_GRACE_MS = 15_000;

export type RunOwner = "queue" | "starting" | "runner" | "none";

export function runOwner(storeRoot: string, runDir: string, status: RunStatus, now = Date.now()): RunOwner {
	if (runEnded(status)) return "none";
	if (processAlive(readProcess(join(runDir, "runner.json")))) return "runner";
	if (existsSync(join(runDir, "runner.json"))) return "none";
	const claim = join(runDir, "claim.json");
	if (existsSync(claim)) return now - mtime(claim) < RUNNER_START_GRACE_MS ? "starting" : "none";
	if (queuedEntryName(storeRoot, status.runId)) return "queue";
	// Dispatched a moment ago and not yet in the queue listing we read.
	return now - status.createdAt < RUNNER_START_GRACE_MS ? "starting" : "none";
}

function mtime(path: string): number {
	try {
		return statSync(path).mtimeMs;
	} catch {
		return 0;
	}
}

/** Kills every process of a run, each verified by its start time (the owner is gone, or did not answer a stop). */
export function killRunProcesses(runId: string): Promise<number> {
	return endRunProcesses(runId);
}

/**
 * Records the end of an ownerless run, once (life/run-end.mjs endOrphan): under the row lock (taken unless
 * the caller holds it), after every process of the run is gone. Returns the status as it is now.
 */
export async function recordOrphanEnd(storeRoot: string, runDir: string, how: "died" | "stopped", lockHeld = false): Promise<RunStatus | undefined> {
	return endOrphan(runDir, how === "stopped" ? stoppedEnd() : diedEnd(runDir), { alive: (status) => runOwner(storeRoot, runDir, status) !== "none", kill: { graceMs: 0 }, lockHeld });
}
