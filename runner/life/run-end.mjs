// Ending a run from outside, when its owner cannot record the end itself: the one way, for the queue
// (a start failure, a refused entry, a removed target), the stop of a queued run, orphan recovery here,
// the far side (follow after a host reboot, stop) and a container's exit. Every end writes the same
// shape: the state, a code (reasons.mjs) and the reason, and a coded receipt for each message still
// waiting, which the status lists too. Runners and links end their own runs with `finalize`.
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { DISK_FULL_BYTES, diskSpace, touchNotify, writeJsonAtomic } from "../store/fs-util.mjs";
import { endRunProcesses } from "../store/proc.mjs";
import { tryLockRow } from "../store/row-lock.mjs";
import { safeStatus } from "../store/safe-read.mjs";
import { rejectWaiting } from "./inbox.mjs";
import { releaseRunSlots } from "./slots.mjs";
import { endFromOutside, statusError } from "./state-rules.mjs";

/** @typedef {import("./state-rules.mjs").RunEnd} RunEnd */
/** @typedef {import("./state-rules.mjs").RunStatus} RunStatus */

/** It could not start: run.json refused, its target removed, its runner not spawned. @param {string} reason @returns {RunEnd} */
export const startFailedEnd = (reason) => ({
	state: "failed",
	code: "start-failed",
	reason,
	messages: { code: "not-started", detail: "it failed before it started" },
});

/** Stopped while it waited in the queue. @returns {RunEnd} */
export const stoppedQueuedEnd = () => ({
	state: "stopped",
	code: "stopped",
	reason: "stopped while queued",
	messages: { code: "not-started", detail: "it was stopped while queued" },
});

/** Stopped, and its owner could not record it (gone, hung, or not started at its target). @returns {RunEnd} */
export const stoppedEnd = () => ({
	state: "stopped",
	code: "stopped",
	reason: "stopped",
	messages: { code: "run-ended" },
});

/**
 * Its owner is gone without recording an end: `reason` (and `code`) when the caller knows why (a
 * container's exit), else what the run's files say (its runner never recorded itself; the store's disk is full).
 * @param {string} runDir @param {string} [reason] @param {import("./reasons.mjs").ReasonCode} [code]
 * @returns {RunEnd}
 */
export function diedEnd(runDir, reason, code = "runner-died") {
	if (reason) return { state: "failed", code, reason, messages: { code: "run-ended" } };
	const neverStarted = !existsSync(join(runDir, "runner.json"));
	const what = neverStarted ? "runner never started" : "runner died";
	const free = diskSpace(runDir);
	// A runner that died on a full disk leaves no words behind; the disk itself still tells why.
	if (free !== undefined && free < DISK_FULL_BYTES)
		return {
			state: "failed",
			code: "disk-full",
			reason: `${what}: no space left on the store's disk (${free} bytes free at ${runDir})`,
			messages: { code: "run-ended" },
		};
	return {
		state: "failed",
		code: neverStarted ? "never-started" : "runner-died",
		reason: what,
		messages: { code: "run-ended" },
	};
}

/** rows/<row>/runs/<run> -> the store's root. @param {string} runDir */
const storeOf = (runDir) => dirname(dirname(dirname(dirname(runDir))));

/** What a reader shows of a run that will end this way (endRun writes the same). @param {RunStatus} status @param {RunEnd} end @param {number} [now] */
export function endedStatus(status, end, now = Date.now()) {
	return endFromOutside(structuredClone(status), end, now);
}

/**
 * Writes the end of a run its caller owns (the queue entry's claim, or the row lock with its owner
 * gone): status, receipts, notify/, the run's slot. A run that ended already is left as it is; so is a
 * status that is not one (it is never rewritten). Returns the status as it is now; throws when it
 * cannot be written.
 * @param {string} runDir @param {RunEnd} end
 * @returns {RunStatus | undefined}
 */
export function endRun(runDir, end) {
	const found = safeStatus(runDir);
	const ids = { runId: basename(runDir), rowId: basename(dirname(dirname(runDir))) };
	if (!found || statusError(found, ids)) return /** @type {RunStatus | undefined} */ (found);
	const status = /** @type {RunStatus} */ (/** @type {unknown} */ (found));
	if (typeof status.endedAt === "number") return status;
	const now = Date.now();
	endFromOutside(status, end, now);
	rejectWaiting(runDir, status, end.messages.code, now, end.messages.detail);
	writeJsonAtomic(join(runDir, "status.json"), status);
	// Its processes are gone and its end is recorded: its slot is free for the queue now.
	try {
		releaseRunSlots(storeOf(runDir), status.runId);
	} catch {
		// The queue's lock cannot be had: the slot, stale now, goes to the next claim that needs it.
	}
	touchNotify(storeOf(runDir), status.rowId);
	return status;
}

/** Why a claimed run never started, recorded by its claimer; a failure to record it is left to readers. @param {string} runDir @param {string} reason */
export function recordStartFailure(runDir, reason) {
	try {
		endRun(runDir, startFailedEnd(reason));
	} catch {
		// Readers derive "runner never started" once the start grace has passed.
	}
}

/**
 * Ends a run whose owner is gone (found by a reader, a far follow, a container's exit): under the row
 * lock (taken here unless `lockHeld`), once, and only when, read again there, the run has not ended and
 * `alive` still says no owner runs it. `kill`: what is left of its processes is ended first (not for a
 * container run: its link carries the run's tag). `end` may depend on the fresh status. Returns the
 * status as it is now (another holder of the lock is recording the same end).
 * @param {string} runDir @param {RunEnd | ((status: RunStatus) => RunEnd)} end
 * @param {{ alive: (status: RunStatus) => boolean | Promise<boolean>, kill?: { graceMs: number, tag?: (runId: string) => string }, lockHeld?: boolean }} options
 *   `kill.tag`: the tag its processes carry (default its id; a far run's differs, proc.mjs runTag)
 * @returns {Promise<RunStatus | undefined>}
 */
export async function endOrphan(runDir, end, options) {
	const release = options.lockHeld ? () => undefined : tryLockRow(dirname(dirname(runDir)));
	if (!release) return /** @type {RunStatus | undefined} */ (safeStatus(runDir));
	try {
		const status = /** @type {RunStatus | undefined} */ (safeStatus(runDir));
		if (!status || typeof status.endedAt === "number" || (await options.alive(status))) return status;
		if (options.kill)
			await endRunProcesses(options.kill.tag?.(status.runId) ?? status.runId, { graceMs: options.kill.graceMs });
		return endRun(runDir, typeof end === "function" ? end(status) : end);
	} finally {
		release();
	}
}
