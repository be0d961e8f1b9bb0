// The run queue: queued runs are files, not processes (entries: queue-entries.mjs). pumpQueue() starts
// them FIFO across every pi process: under the queue's lock it lists the entries and, oldest first,
// claims a slot for one, then the entry itself (one atomic rename into the run's directory, so exactly
// one pumper or stopper wins it); after the lock it spawns the claimed runs' runners. Finishing runners
// and board reads both pump, so a killed runner never strands it. Each target has its own slots and
// limit (config.json, read at every pump): an entry whose target is full waits without blocking
// entries of other targets; a non-local run's owner is its link (runner/link/target-link.mjs).
import { spawn } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { LOCAL_TARGET, readLimits, TARGET_NAME } from "./board-config.mjs";
import { DISK_FULL_BYTES, diskSpace, ensureDir, FILE_MODE } from "../store/fs-util.mjs";
import { claimHeld, forgetGoneEntries, queueDir, queuedNames, readEntry, recordStartFailure, refuseEntry } from "./queue-entries.mjs";
import { holdQueueLock } from "./queue-lock.mjs";
import { processStartTime, RUN_TAG } from "../store/proc.mjs";
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
 * @typedef {object} Start  a claimed run whose runner is spawned once the lock is released
 * @property {string} runDir
 * @property {string} runId
 * @property {string} slot
 * @property {string} target
 * @property {number} logFd
 */

/**
 * Starts queued runs while their targets have free slots, oldest first (FIFO per target). Returns the
 * started run ids, and the reason the queue is stuck when it cannot start anything for a reason other
 * than "all slots taken" (a full disk, EACCES, a bad config.json). Bad entries are refused wherever they
 * stand in the queue; each entry is checked once. An empty queue costs one readdir and no lock.
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
	// Nothing waits: a good moment to free what a runner killed at its very end still holds.
	if (names.length === 0) {
		forgetGoneEntries(storeRoot, names);
		sweepStaleSlots(slotsOf(storeRoot, LOCAL_TARGET).dir);
		return { started };
	}
	const limits = readLimits(storeRoot);
	if (limits.error) return { started, error: limits.error };
	let release;
	try {
		release = holdQueueLock(queueDir(storeRoot));
	} catch (error) {
		return { started, error: diskFull(storeRoot) ?? `cannot lock the queue: ${error instanceof Error ? error.message : String(error)}` };
	}
	/** @type {{ starts: Start[], error?: string }} */
	let claimed;
	try {
		claimed = claimStarts(storeRoot, limits, options);
	} finally {
		release();
	}
	// After the lock: a spawn is slow, and the claims already fixed the order.
	let error = claimed.error;
	for (const start of claimed.starts) {
		try {
			spawnRunner(start.runDir, start.slot, options.node, { ...options.env, [RUN_TAG]: start.runId }, start.target === LOCAL_TARGET ? RUNNER_PATH : LINK_PATH, start.logFd);
			started.push(start.runId);
		} catch (spawnError) {
			// The claimed run is recorded as "runner never started" by its next reader.
			releaseSlot(start.slot, start.runId);
			error ??= `cannot start a runner in ${start.runDir}: ${spawnError instanceof Error ? spawnError.message : String(spawnError)}`;
		}
	}
	return error ? { started, error } : { started };
}

/**
 * The claims of one pump, made holding the queue's lock: the queue as it is now, oldest first.
 * @param {string} storeRoot @param {ReturnType<typeof readLimits>} limits @param {PumpOptions} options
 * @returns {{ starts: Start[], error?: string }}
 */
function claimStarts(storeRoot, limits, options) {
	/** @type {Start[]} */
	const starts = [];
	let names;
	try {
		names = queuedNames(storeRoot);
	} catch (error) {
		return { starts, error: `cannot read the queue ${queueDir(storeRoot)}: ${String(error)}` };
	}
	forgetGoneEntries(storeRoot, names);
	/** Targets found full at this pump: their younger entries wait. */
	const full = new Set();
	for (const name of names) {
		const read = readEntry(storeRoot, name);
		if ("invalid" in read) {
			refuseEntry(storeRoot, name, read.invalid);
			continue;
		}
		const target = read.entry.target ?? LOCAL_TARGET;
		if (full.has(target)) continue;
		const max = target === LOCAL_TARGET ? (limits.local ?? options.maxConcurrent) : limits.targets.get(target);
		if (max === undefined) {
			// Removed while this run waited (targets remove refuses that, but not a hand edit): say so on the row.
			if (claimHeld(storeRoot, name, read.runDir, "start")) recordStartFailure(read.runDir, `target ${target} does not exist any more (it was removed while this run waited)`);
			continue;
		}
		const outcome = claimStart(storeRoot, name, read, target, max);
		if (outcome === "full") full.add(target);
		else if (outcome !== "lost") {
			if ("error" in outcome) return { starts, error: outcome.error };
			starts.push(outcome);
		}
	}
	return { starts };
}

/** The disk-full reason, when the store's disk is. @param {string} storeRoot */
function diskFull(storeRoot) {
	const space = diskSpace(storeRoot);
	return space !== undefined && space < DISK_FULL_BYTES ? `disk full: ${space} bytes free on the store's disk (${storeRoot}); queued runs start when space returns` : undefined;
}

/**
 * @param {string} storeRoot @param {string} name @param {{ entry: import("./queue-entries.mjs").QueueEntry, runDir: string }} read
 * @param {string} target @param {number} max
 * @returns {"full" | "lost" | Start | { error: string }}
 */
function claimStart(storeRoot, name, read, target, max) {
	const { entry, runDir } = read;
	// Too little room for a run to record itself: nothing starts until there is.
	const noSpace = diskFull(storeRoot);
	if (noSpace) return { error: noSpace };
	let slot;
	try {
		const slots = slotsOf(storeRoot, target);
		ensureDir(slots.dir);
		slot = tryClaimSlot(slots.dir, Math.max(1, max), { pid: process.pid, start: processStartTime(process.pid), runId: entry.runId, rowId: entry.rowId }, slots.holds);
	} catch (error) {
		return { error: error instanceof Error ? error.message : String(error) };
	}
	if (!slot) return "full";
	/** @param {unknown} error @param {number} [fd] */
	const failed = (error, fd) => {
		if (fd !== undefined) closeSync(fd);
		releaseSlot(slot, entry.runId);
		return { error: `cannot start the run in ${runDir}: ${error instanceof Error ? error.message : String(error)}` };
	};
	let logFd;
	try {
		// Opened before the claim: a run that cannot get its log (a full disk) stays queued.
		logFd = openSync(join(runDir, "runner.log"), "a", FILE_MODE);
	} catch (error) {
		return failed(error);
	}
	let claimed;
	try {
		claimed = claimHeld(storeRoot, name, runDir, "start", slot);
	} catch (error) {
		return failed(error, logFd);
	}
	if (!claimed) {
		closeSync(logFd);
		releaseSlot(slot, entry.runId);
		return "lost";
	}
	return { runDir, runId: entry.runId, slot, target, logFd };
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
