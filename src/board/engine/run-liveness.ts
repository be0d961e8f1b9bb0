/**
 * Who owns a run right now, and recording the end of a run whose owner died. Readers never write a
 * live run's files: only a run with no owner left (no queue entry, no live runner, past the start
 * grace) is ended here, once, under the row lock, after every process of the run is gone.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { DISK_FULL_BYTES, diskSpace, touchNotify, writeJsonAtomic } from "../../../runner/store/fs-util.mjs";
import { rejectWaiting } from "../../../runner/life/inbox.mjs";
import { runProcesses, signalVerified } from "../../../runner/store/proc.mjs";
import { queuedEntryName, releaseRunSlots, returnDeadClaim } from "../../../runner/life/queue.mjs";
import { tryLockRow } from "../../../runner/store/row-lock.mjs";
import { markRunnerDied, markStopped, runEnded } from "../../../runner/life/state-rules.mjs";
import { FileCache, processAlive, readProcess, readStatus } from "./store.ts";
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

/** A runner that died on a full disk leaves no words behind; the disk itself still tells why. */
function diskFull(path: string): string | undefined {
	const free = diskSpace(path);
	return free !== undefined && free < DISK_FULL_BYTES ? `no space left on the store's disk (${free} bytes free at ${path})` : undefined;
}

/** Kills every process of a run, each verified by its start time (the owner is gone; nobody else will). */
export function killRunProcesses(runId: string): void {
	for (let round = 0; round < 5; round++) {
		const procs = runProcesses(runId);
		if (procs.length === 0) return;
		for (const p of procs) signalVerified(p.pid, p.start, "SIGKILL");
	}
}

/**
 * Records the end of an ownerless run exactly once. Returns the status to show (the fresh one when
 * another process holds the row lock: it is recording the same end).
 */
export function recordOrphanEnd(rowDir: string, runDir: string, storeRoot: string, rowId: string, how: "died" | "stopped"): RunStatus {
	const release = tryLockRow(rowDir);
	if (!release) return readStatus(runDir, new FileCache());
	try {
		// A run whose claimer died before its runner started goes back to its place in the queue.
		if (how === "died" && returnDeadClaim(storeRoot, runDir)) return readStatus(runDir, new FileCache());
		return endOrphanLocked(runDir, storeRoot, rowId, how);
	} finally {
		release();
	}
}

/** recordOrphanEnd for a caller that already holds the row lock. */
export function endOrphanLocked(runDir: string, storeRoot: string, rowId: string, how: "died" | "stopped"): RunStatus {
	const fresh = readStatus(runDir, new FileCache());
	{
		if (runEnded(fresh) || runOwner(storeRoot, runDir, fresh) !== "none") return fresh;
		killRunProcesses(fresh.runId);
		const now = Date.now();
		if (how === "stopped") markStopped(fresh, now);
		else {
			markRunnerDied(fresh, now);
			if (!existsSync(join(runDir, "runner.json"))) fresh.error = "runner never started";
			const disk = diskFull(runDir);
			if (disk) {
				fresh.error = `${fresh.error}: ${disk}`;
				fresh.errorCode = "disk-full";
			}
		}
		rejectWaiting(runDir, fresh, "run-ended", now);
		writeJsonAtomic(join(runDir, "status.json"), fresh);
		// Every process of the run is gone and its end is recorded: its slot is free for the queue now.
		releaseRunSlots(storeRoot, fresh.runId);
		touchNotify(storeRoot, rowId);
		return fresh;
	}
}
