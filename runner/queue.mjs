// The run queue: queued runs are files, not processes. queue/<dispatchedAt>-<runId>.json entries start
// FIFO across every pi process: pumpQueue() claims a slot for the oldest entry, then the entry itself
// (one atomic rename into the run's directory, so exactly one pumper or stopper wins it), then spawns
// that run's runner. Finishing runners and board reads both pump, so a killed runner never strands it.
// Each target has its own slots and limit (config.json, read at every pump): an entry whose target is
// full waits without blocking entries of other targets; a non-local run's owner is its link
// (targets/target-link.mjs), not a runner.
import { spawn } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { LOCAL_TARGET, readLimits } from "./board-config.mjs";
import { ensureDir, FILE_MODE, touchNotify, writeJsonAtomic } from "./fs-util.mjs";
import { finalize } from "./state-rules.mjs";
import { processStartTime, RUN_TAG } from "./proc.mjs";
import { releaseSlot, tryClaimSlot } from "./slots.mjs";

export const RUNNER_PATH = resolve(dirname(fileURLToPath(import.meta.url)), "job-runner.mjs");
export const LINK_PATH = resolve(dirname(fileURLToPath(import.meta.url)), "targets", "target-link.mjs");

/**
 * @typedef {object} QueueEntry
 * @property {string} rowId
 * @property {string} runId
 * @property {string} runDir
 * @property {number} at
 * @property {string} [target]  where the run goes (absent: local)
 */

/** @param {string} storeRoot */
export function queueDir(storeRoot) {
	return join(storeRoot, "queue");
}

/** @param {QueueEntry} entry */
function entryName(entry) {
	return `${String(entry.at).padStart(15, "0")}-${entry.runId}.json`;
}

/**
 * Adds a prepared run (run.json and a queued status.json already in runDir) to the queue. Its place is
 * the moment it enters the queue, so no entry can appear behind a younger one that already started.
 * @param {string} storeRoot @param {Omit<QueueEntry, "at">} entry
 */
export function enqueue(storeRoot, entry) {
	if (entry.target === LOCAL_TARGET) entry = { ...entry, target: undefined };
	ensureDir(queueDir(storeRoot));
	const queued = { ...entry, at: Date.now() };
	writeJsonAtomic(join(queueDir(storeRoot), entryName(queued)), queued);
}

/** Entry file names, oldest first. @param {string} storeRoot */
export function queuedNames(storeRoot) {
	try {
		return readdirSync(queueDir(storeRoot))
			.filter((name) => name.endsWith(".json") && !name.startsWith("."))
			.sort();
	} catch (error) {
		if (/** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT") return [];
		throw error;
	}
}

/** @param {string} storeRoot @param {string} runId */
export function queuedEntryName(storeRoot, runId) {
	return queuedNames(storeRoot).find((name) => name.endsWith(`-${runId}.json`));
}

/** @param {string} path @returns {QueueEntry | undefined} */
function readEntry(path) {
	try {
		const value = JSON.parse(readFileSync(path, "utf8"));
		if (value && typeof value.runId === "string" && typeof value.runDir === "string" && typeof value.rowId === "string" && (value.target === undefined || typeof value.target === "string")) return value;
	} catch {
		// Unreadable or torn: not startable; left in place for the user to see.
	}
	return undefined;
}

/**
 * Takes a queued run out of the queue: whoever's rename succeeds owns the run (to start or to stop).
 * A start names the slot it holds, so the runs' own records show which run held which slot when.
 * @param {string} storeRoot @param {string} name @param {string} runDir @param {string} purpose @param {string} [slot]
 */
export function claimEntry(storeRoot, name, runDir, purpose, slot) {
	const claim = join(runDir, "claim.json");
	try {
		renameSync(join(queueDir(storeRoot), name), claim);
	} catch {
		return false;
	}
	// FIFO evidence for whoever audits the queue: entries older than this one still waiting (0 in FIFO).
	let olderWaiting = -1;
	try {
		olderWaiting = queuedNames(storeRoot).filter((other) => other < name).length;
	} catch {
		// Unknown.
	}
	writeJsonAtomic(claim, { by: process.pid, start: processStartTime(process.pid), purpose, at: Date.now(), olderWaiting, ...(slot ? { slot: basename(slot) } : {}) });
	return true;
}

/**
 * @typedef {object} PumpOptions
 * @property {number} maxConcurrent  the local limit when config.json sets none
 * @property {string} node         node binary for the runner
 * @property {NodeJS.ProcessEnv} env  base environment of the runner (the run's tag is added)
 */

/** Slots of a target, and what else holds one: a target run goes on while our link is gone. @param {string} storeRoot @param {string} target */
export function slotsOf(storeRoot, target) {
	if (target === LOCAL_TARGET) return { dir: join(storeRoot, "slots"), holds: undefined };
	return { dir: join(storeRoot, "targets", target, "slots"), holds: (/** @type {import("./slots.mjs").SlotOwner} */ owner) => runNotOver(storeRoot, owner) };
}

/** A target slot's run is over when its status says so (or its row is gone). @param {string} storeRoot @param {import("./slots.mjs").SlotOwner} owner */
function runNotOver(storeRoot, owner) {
	if (!owner.rowId) return false;
	try {
		const status = JSON.parse(readFileSync(join(storeRoot, "rows", owner.rowId, "runs", owner.runId, "status.json"), "utf8"));
		return typeof status?.endedAt !== "number";
	} catch (error) {
		return /** @type {NodeJS.ErrnoException} */ (error).code !== "ENOENT";
	}
}

/**
 * Starts queued runs while their targets have free slots, oldest first. Returns the started run ids,
 * and the reason the queue is stuck when claiming a slot failed for a reason other than "all taken".
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
	if (names.length === 0) return { started };
	const limits = readLimits(storeRoot);
	if (limits.error) return { started, error: limits.error };
	/** Targets found full at this pump: their younger entries wait (FIFO per target). */
	const full = new Set();
	for (const name of names) {
		const entry = readEntry(join(queueDir(storeRoot), name));
		if (!entry) continue;
		const target = entry.target ?? LOCAL_TARGET;
		if (full.has(target)) continue;
		const max = target === LOCAL_TARGET ? (limits.local ?? options.maxConcurrent) : limits.targets.get(target);
		if (max === undefined) {
			// Removed while this run waited (targets remove refuses that, but not a hand edit): say so on the row.
			if (claimEntry(storeRoot, name, entry.runDir, "start")) recordStartFailure(entry.runDir, `target ${target} does not exist any more (it was removed while this run waited)`);
			continue;
		}
		const slots = slotsOf(storeRoot, target);
		let slot;
		try {
			ensureDir(slots.dir);
			slot = tryClaimSlot(slots.dir, Math.max(1, max), { pid: process.pid, start: processStartTime(process.pid), runId: entry.runId, rowId: entry.rowId }, slots.holds);
		} catch (error) {
			return { started, error: error instanceof Error ? error.message : String(error) };
		}
		if (!slot) {
			full.add(target);
			continue;
		}
		if (!claimEntry(storeRoot, name, entry.runDir, "start", slot)) {
			releaseSlot(slot, entry.runId);
			continue;
		}
		try {
			spawnRunner(entry.runDir, slot, options.node, { ...options.env, [RUN_TAG]: entry.runId }, target === LOCAL_TARGET ? RUNNER_PATH : LINK_PATH);
		} catch (error) {
			// The claimed run is recorded as "runner never started" by its next reader.
			releaseSlot(slot, entry.runId);
			return { started, error: `cannot start a runner in ${entry.runDir}: ${error instanceof Error ? error.message : String(error)}` };
		}
		started.push(entry.runId);
	}
	return { started };
}

/** Records why a claimed run never started (its owner, the claimer, does). @param {string} runDir @param {string} reason */
export function recordStartFailure(runDir, reason) {
	try {
		const statusPath = join(runDir, "status.json");
		const status = JSON.parse(readFileSync(statusPath, "utf8"));
		finalize(status, { code: null, signal: null, spawnError: reason, now: Date.now() });
		writeJsonAtomic(statusPath, status);
		const rowDir = dirname(dirname(runDir));
		touchNotify(dirname(dirname(rowDir)), basename(rowDir));
	} catch {
		// Readers record "runner never started" once the start grace has passed.
	}
}

/**
 * Spawns the detached runner of a claimed run. Its failure to start is recorded by the runner's
 * absence: readers turn a claimed run with no runner into "failed: runner never started".
 * A target run's owner is its link (LINK_PATH), spawned the same way.
 * @param {string} runDir @param {string} slot @param {string} node @param {NodeJS.ProcessEnv} env @param {string} [script]
 */
export function spawnRunner(runDir, slot, node, env, script = RUNNER_PATH) {
	const logFd = openSync(join(runDir, "runner.log"), "a", FILE_MODE);
	try {
		const child = spawn(node, [script, join(runDir, "run.json"), slot], { detached: true, stdio: ["ignore", logFd, logFd], cwd: runDir, env });
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
