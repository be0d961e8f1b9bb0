// The run queue: queued runs are files, not processes (entries: queue-entries.mjs). pumpQueue() starts
// them FIFO across every pi process: it claims a slot of a target, then, under the queue's lock, the
// oldest entry of that target (one atomic rename into the run's directory, so exactly one pumper or
// stopper wins it), then spawns that run's runner. Finishing runners and board reads both pump, so a
// killed runner never strands it. Each target has its own slots and
// limit (config.json, read at every pump): an entry whose target is full waits without blocking
// entries of other targets; a non-local run's owner is its link (runner/link/target-link.mjs).
import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { LOCAL_TARGET, readLimits, TARGET_NAME } from "./board-config.mjs";
import { DISK_FULL_BYTES, diskSpace, ensureDir, FILE_MODE, writeJsonAtomic } from "../store/fs-util.mjs";
import { claimEntry, claimHeld, forgetGoneEntries, queueDir, queuedNames, readEntry, recordStartFailure, refuseEntry, returnClaim } from "./queue-entries.mjs";
import { holdQueueLock, queueSteps, withQueueLock } from "./queue-lock.mjs";
import { processStartTime, RUN_TAG, runProcesses } from "../store/proc.mjs";
import { releaseSlot, slotOfRun, sweepStaleSlots, tryClaimSlot } from "./slots.mjs";
import { isValidId, runDirOf } from "../store/store-layout.mjs";

export { claimEntry, enqueue, queueDir, queuedEntryName, queuedNames, readEntry, recordStartFailure } from "./queue-entries.mjs";
export { queueSteps } from "./queue-lock.mjs";

export const RUNNER_PATH = resolve(dirname(fileURLToPath(import.meta.url)), "../job-runner.mjs");
export const LINK_PATH = resolve(dirname(fileURLToPath(import.meta.url)), "../link/target-link.mjs");

/**
 * @typedef {object} PumpOptions
 * @property {number} maxConcurrent
 * @property {string} node         node binary for the runner
 * @property {NodeJS.ProcessEnv} env  base environment of the runner (the run's tag is added)
 */

/** Slots of a target, and what else holds one: a target run goes on while our link is gone. @param {string} storeRoot @param {string} target */
export function slotsOf(storeRoot, target) {
	if (target === LOCAL_TARGET) return { dir: join(storeRoot, "slots"), holds: undefined };
	return { dir: join(storeRoot, "targets", target, "slots"), holds: (/** @type {import("./slots.mjs").SlotOwner} */ owner) => runNotOver(storeRoot, owner) };
}

/**
 * Frees the slot a run still holds once its end is recorded from outside (its runner was killed): now,
 * not whenever a later claim finds every slot taken. Only the run's own slot file goes.
 * @param {string} storeRoot @param {string} runId
 */
export function releaseRunSlots(storeRoot, runId) {
	/** @type {string[]} */
	let targets = [];
	try {
		targets = readdirSync(join(storeRoot, "targets")).filter((name) => TARGET_NAME.test(name));
	} catch {
		// No targets.
	}
	for (const dir of [slotsOf(storeRoot, LOCAL_TARGET).dir, ...targets.map((name) => slotsOf(storeRoot, name).dir)]) {
		releaseSlot(slotOfRun(dir, runId), runId);
	}
}

/**
 * A run whose claimer died before its runner started goes back to its place in the queue (returnClaim),
 * the slot its claimer took for it freed first. Its readers call this when the run has no owner left.
 * @param {string} storeRoot @param {string} runDir
 */
export function returnDeadClaim(storeRoot, runDir) {
	/** @param {string} runId */
	const freeRun = (runId) => {
		if (runProcesses(runId).length > 0) return false;
		releaseRunSlots(storeRoot, runId);
		return true;
	};
	try {
		return returnClaim(storeRoot, runDir, freeRun) !== undefined;
	} catch {
		return false;
	}
}

/** A target slot's run is over when its status says so (or its row is gone). @param {string} storeRoot @param {import("./slots.mjs").SlotOwner} owner */
function runNotOver(storeRoot, owner) {
	if (!owner.rowId || !isValidId(owner.rowId) || !isValidId(owner.runId)) return false;
	try {
		const status = JSON.parse(readFileSync(join(runDirOf(storeRoot, owner.rowId, owner.runId), "status.json"), "utf8"));
		return typeof status?.endedAt !== "number";
	} catch (error) {
		return /** @type {NodeJS.ErrnoException} */ (error).code !== "ENOENT";
	}
}

/**
 * Starts queued runs while their targets have free slots, oldest first (FIFO per target). Returns the
 * started run ids, and the reason the queue is stuck when it cannot start anything for a reason other
 * than "all slots taken" (a full disk, EACCES, a bad config.json). Bad entries are refused wherever they
 * stand in the queue; each entry is checked once. A slot is claimed first, without the queue's lock (so
 * finding a target full, what most board reads find, takes no lock, and a slot claim's /proc scan holds
 * nobody up); then, holding the lock, the oldest entry of that target as the queue is now; the runner
 * is spawned after the lock.
 * @param {string} storeRoot @param {PumpOptions} options
 * @returns {{ started: string[], error?: string }}
 */
export function pumpQueue(storeRoot, options) {
	/** @type {string[]} */
	const started = [];
	let names;
	try {
		names = queuedNames(storeRoot);
	} catch (error) {
		return { started, error: `cannot read the queue ${queueDir(storeRoot)}: ${String(error)}` };
	}
	forgetGoneEntries(storeRoot, names);
	// Nothing waits: a good moment to free what a runner killed at its very end still holds.
	if (names.length === 0) {
		try {
			sweepStaleSlots(slotsOf(storeRoot, LOCAL_TARGET).dir, undefined, inTurn(storeRoot));
		} catch {
			// The queue's lock cannot be had (a read-only store): the next pump sweeps.
		}
		return { started };
	}
	const limits = readLimits(storeRoot);
	if (limits.error) return { started, error: limits.error };
	/** Targets found full (or with nothing left to start) at this pump: their younger entries wait. */
	const done = new Set();
	let stale = false;
	// One start per entry listed at most: each turn starts the oldest entry of its target then waiting.
	for (const name of names) {
		const read = readEntry(storeRoot, name);
		if ("invalid" in read) {
			refuseEntry(storeRoot, name, read.invalid);
			continue;
		}
		const target = read.entry.target ?? LOCAL_TARGET;
		if (done.has(target)) continue;
		const max = target === LOCAL_TARGET ? (limits.local ?? options.maxConcurrent) : limits.targets.get(target);
		if (max === undefined) {
			// Removed while this run waited (targets remove refuses that, but not a hand edit): say so on the row.
			try {
				if (claimEntry(storeRoot, name, read.runDir, "start")) recordStartFailure(read.runDir, `target ${target} does not exist any more (it was removed while this run waited)`);
			} catch (error) {
				return { started, error: lockFailure(storeRoot, error) };
			}
			continue;
		}
		const outcome = startOldest(storeRoot, target, max);
		if (outcome === "none") {
			done.add(target);
			continue;
		}
		if ("error" in outcome) return { started, error: outcome.error };
		queueSteps.at("spawn", outcome.runId);
		try {
			spawnRunner(outcome.runDir, outcome.slot, options.node, { ...options.env, [RUN_TAG]: outcome.runId }, target === LOCAL_TARGET ? RUNNER_PATH : LINK_PATH, outcome.logFd);
		} catch (error) {
			// The claimed run is recorded as "runner never started" by its next reader.
			releaseSlot(outcome.slot, outcome.runId);
			return { started, error: `cannot start a runner in ${outcome.runDir}: ${error instanceof Error ? error.message : String(error)}` };
		}
		started.push(outcome.runId);
		// Another entry than this pump listed (the queue changed since): what it listed is stale, list again.
		stale ||= outcome.runId !== read.entry.runId;
	}
	if (!stale) return { started };
	const more = pumpQueue(storeRoot, options);
	return { ...more, started: [...started, ...more.started] };
}

/** Stale slots are broken holding the queue's lock, one breaker at a time. @param {string} storeRoot @returns {import("./slots.mjs").TakeTurns} */
function inTurn(storeRoot) {
	return (breakIt) => {
		ensureDir(queueDir(storeRoot));
		withQueueLock(queueDir(storeRoot), breakIt);
	};
}

/** Why the queue's lock could not be had. @param {string} storeRoot @param {unknown} error */
function lockFailure(storeRoot, error) {
	return diskFull(storeRoot) ?? `cannot lock the queue: ${error instanceof Error ? error.message : String(error)}`;
}

/** The disk-full reason, when the store's disk is. @param {string} storeRoot */
function diskFull(storeRoot) {
	const space = diskSpace(storeRoot);
	return space !== undefined && space < DISK_FULL_BYTES ? `disk full: ${space} bytes free on the store's disk (${storeRoot}); queued runs start when space returns` : undefined;
}

/**
 * Claims a slot of `target`, then, under the queue's lock, the oldest entry of `target` now, which the
 * slot is then written for. "none": the target is full, or nothing of it waits any more.
 * @param {string} storeRoot @param {string} target @param {number} max
 * @returns {"none" | { error: string } | { runDir: string, runId: string, slot: string, logFd: number }}
 */
function startOldest(storeRoot, target, max) {
	// Too little room for a run to record itself: nothing starts until there is.
	const noSpace = diskFull(storeRoot);
	if (noSpace) return { error: noSpace };
	const owner = (/** @type {string} */ runId, /** @type {string} */ rowId = "") => ({ pid: process.pid, start: processStartTime(process.pid), runId, ...(rowId ? { rowId } : {}) });
	// Claimed in a name no run has: a reader that records the end of a run this pump listed (since claimed
	// by another) frees every slot naming that run, and must not free this one.
	let holder = `claiming-${process.pid}`;
	let slot;
	try {
		const slots = slotsOf(storeRoot, target);
		ensureDir(slots.dir);
		slot = tryClaimSlot(slots.dir, Math.max(1, max), owner(holder), slots.holds, inTurn(storeRoot));
	} catch (error) {
		return { error: error instanceof Error ? error.message : String(error) };
	}
	if (!slot) return "none";
	const held = slot;
	queueSteps.at("slot", held);
	let release;
	try {
		release = holdQueueLock(queueDir(storeRoot));
	} catch (error) {
		releaseSlot(held, holder);
		return { error: lockFailure(storeRoot, error) };
	}
	let at = "";
	try {
		for (const name of queuedNames(storeRoot)) {
			const read = readEntry(storeRoot, name);
			if (!("entry" in read) || (read.entry.target ?? LOCAL_TARGET) !== target) continue;
			const { entry, runDir } = read;
			// A stray entry of a run claimed already never starts it again (claims are made under this lock).
			if (existsSync(join(runDir, "claim.json"))) continue;
			at = ` in ${runDir}`;
			// Our slot (its claimer, this live process, keeps it ours) now names the run it is for.
			if (entry.runId !== holder) writeJsonAtomic(held, owner(entry.runId, entry.rowId));
			holder = entry.runId;
			// Opened before the claim: a run that cannot get its log (a full disk) stays queued.
			const logFd = openSync(join(runDir, "runner.log"), "a", FILE_MODE);
			let claimed;
			try {
				claimed = claimHeld(storeRoot, name, runDir, "start", held);
			} catch (error) {
				closeSync(logFd);
				throw error;
			}
			if (claimed) return { runDir, runId: entry.runId, slot: held, logFd };
			closeSync(logFd);
		}
		releaseSlot(held, holder);
		return "none";
	} catch (error) {
		releaseSlot(held, holder);
		return { error: `cannot start the run${at}: ${error instanceof Error ? error.message : String(error)}` };
	} finally {
		release();
	}
}

/**
 * Spawns the detached runner of a claimed run on its log fd (closed here; opened here when not given).
 * Its failure to start is recorded by the runner's absence: readers turn a claimed run with no runner
 * into "failed: runner never started". A target run's owner is its link (LINK_PATH), spawned the same way.
 * @param {string} runDir @param {string} slot @param {string} node @param {NodeJS.ProcessEnv} env
 * @param {string} [script] @param {number} [logFd]
 */
export function spawnRunner(runDir, slot, node, env, script = RUNNER_PATH, logFd = openSync(join(runDir, "runner.log"), "a", FILE_MODE)) {
	try {
		// A small young generation: a long stream's garbage is collected as it comes (about 30 MB less peak RSS).
		const child = spawn(node, ["--max-semi-space-size=2", script, join(runDir, "run.json"), slot], { detached: true, stdio: ["ignore", logFd, logFd], cwd: runDir, env });
		child.on("error", (error) => {
			// The pumper claimed this run and still owns it: it records why the run never started.
			releaseSlot(slot, String(env[RUN_TAG]));
			recordStartFailure(runDir, `could not start the runner with ${node}: ${error.message}`);
		});
		child.unref();
		return child;
	} finally {
		closeSync(logFd);
	}
}
