// The run queue: queued runs are files, not processes (entries: queue-entries.mjs). pumpQueue() starts
// them FIFO across every pi process: it claims a slot of a target, then, under the queue's lock, the
// oldest entry of that target (one atomic rename into the run's directory, so exactly one pumper or
// stopper wins it), then spawns that run's runner. Finishing runners and the board's settle step (its
// tick, `list`) both pump, so a killed runner never strands it. Each target has its own slots and limit (config.json, read at every
// pump): an entry whose target is full waits without blocking entries of other targets; a non-local
// run's owner is its target's link (target-link-owner.mjs); a pool's run is placed on a member as it
// is claimed (place-run.mjs).
import { closeSync, existsSync } from "node:fs";
import { join } from "node:path";
import { LOCAL_TARGET } from "./vocabulary.mjs";
import { readLimits } from "./board-config.mjs";
import { openAppend, PlantedFileError } from "../store/append-file.mjs";
import { DISK_FULL_BYTES, diskSpace, ensureDir, writeJsonAtomic } from "../store/fs-util.mjs";
import {
	claimEntry,
	claimHeld,
	forgetGoneEntries,
	queueDir,
	queuedNames,
	readEntry,
	refuseEntry,
} from "./queue-entries.mjs";
import { holdQueueLock, queueSteps, queueTurns } from "./queue-lock.mjs";
import { processStartTime, RUN_TAG } from "../store/proc.mjs";
import { recordStartFailure } from "./run-end.mjs";
import { releaseSlot, slotsOf, sweepStaleSlots, tryClaimSlot } from "./slots.mjs";
import { RUNNER_PATH, spawnRunner } from "./spawn-runner.mjs";
import { handToLink } from "./target-link-owner.mjs";
import { claimMemberSlot, placeRun } from "./place-run.mjs";

export { claimEntry, enqueue, queueDir, queuedEntryName, queuedNames, readEntry } from "./queue-entries.mjs";
export { queueSteps } from "./queue-lock.mjs";

/**
 * @typedef {object} PumpOptions
 * @property {number} maxConcurrent
 * @property {string} node         node binary for the runner
 * @property {NodeJS.ProcessEnv} env  base environment of the runner (the run's tag is added)
 */

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
			sweepStaleSlots(slotsOf(storeRoot, LOCAL_TARGET).dir, undefined, queueTurns(storeRoot));
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
				if (claimEntry(storeRoot, name, read.runDir, "start"))
					recordStartFailure(
						read.runDir,
						`target ${target} does not exist any more (it was removed while this run waited)`,
					);
			} catch (error) {
				return { started, error: lockFailure(storeRoot, error) };
			}
			continue;
		}
		// A drained target takes nothing new (targets drain): its runs wait until it is undrained.
		if (limits.configs.get(target)?.drained === true) {
			done.add(target);
			continue;
		}
		const outcome = startOldest(storeRoot, target, max, limits);
		if (outcome === "none") {
			done.add(target);
			continue;
		}
		if ("error" in outcome) return { started, error: outcome.error };
		queueSteps.at("spawn", outcome.runId);
		try {
			if (target === LOCAL_TARGET)
				spawnRunner(
					outcome.runDir,
					outcome.slot,
					options.node,
					{ ...options.env, [RUN_TAG]: outcome.runId },
					RUNNER_PATH,
					outcome.logFd,
				);
			else {
				closeSync(outcome.logFd);
				// Every run of a target has one owner here: the target's link (started when none runs). A pool's
				// run is its member's from now on (its run.json says so), holding the pool's slot too.
				const { placed } = outcome;
				if (placed) placeRun(outcome.runDir, target, placed.member, limits.configs);
				const hand = placed ? { slot: placed.slot, pool: target } : { slot: outcome.slot };
				handToLink(
					storeRoot,
					placed ? placed.member : target,
					outcome.runDir,
					{ rowId: outcome.rowId, runId: outcome.runId, ...hand },
					options,
				);
			}
		} catch (error) {
			// This pump claimed the run and still owns it: it fails with the reason (never back to the queue).
			const reason = `cannot start a runner in ${outcome.runDir}: ${error instanceof Error ? error.message : String(error)}`;
			releaseSlot(outcome.slot, outcome.runId);
			releaseSlot(outcome.placed?.slot, outcome.runId);
			recordStartFailure(outcome.runDir, reason);
			return { started, error: reason };
		}
		started.push(outcome.runId);
		// Another entry than this pump listed (the queue changed since): what it listed is stale, list again.
		stale ||= outcome.runId !== read.entry.runId;
	}
	if (!stale) return { started };
	const more = pumpQueue(storeRoot, options);
	return { ...more, started: [...started, ...more.started] };
}

/** Why the queue's lock could not be had. @param {string} storeRoot @param {unknown} error */
function lockFailure(storeRoot, error) {
	return diskFull(storeRoot) ?? `cannot lock the queue: ${error instanceof Error ? error.message : String(error)}`;
}

/** The disk-full reason, when the store's disk is. @param {string} storeRoot */
function diskFull(storeRoot) {
	const space = diskSpace(storeRoot);
	return space !== undefined && space < DISK_FULL_BYTES
		? `disk full: ${space} bytes free on the store's disk (${storeRoot}); queued runs start when space returns`
		: undefined;
}

/**
 * Claims a slot of `target` (and of the member a pool's run goes to), then, under the queue's lock, the
 * oldest entry of `target` now, which the slots are then written for. "none": the target is full (a
 * pool: no member can take a run), or nothing of it waits any more.
 * @param {string} storeRoot @param {string} target @param {number} max @param {ReturnType<typeof readLimits>} limits
 * @returns {"none" | { error: string } | { runDir: string, runId: string, rowId: string, slot: string, logFd: number, placed?: { member: string, slot: string } }}
 */
function startOldest(storeRoot, target, max, limits) {
	// Too little room for a run to record itself: nothing starts until there is.
	const noSpace = diskFull(storeRoot);
	if (noSpace) return { error: noSpace };
	const owner = (/** @type {string} */ runId, /** @type {string} */ rowId = "") => ({
		pid: process.pid,
		start: processStartTime(process.pid),
		runId,
		...(rowId ? { rowId } : {}),
	});
	// Claimed in a name no run has: a reader that records the end of a run this pump listed (since claimed
	// by another) frees every slot naming that run, and must not free this one.
	let holder = `claiming-${process.pid}`;
	let slot;
	try {
		const slots = slotsOf(storeRoot, target);
		ensureDir(slots.dir);
		slot = tryClaimSlot(slots.dir, Math.max(1, max), owner(holder), slots.holds, queueTurns(storeRoot));
	} catch (error) {
		return { error: error instanceof Error ? error.message : String(error) };
	}
	if (!slot) return "none";
	const held = slot;
	queueSteps.at("slot", held);
	// A pool's run: a slot of the member it goes to as well (placement.mjs), or it waits.
	const members = limits.groups.get(target);
	/** @type {{ member: string, slot: string } | undefined} */
	let placed;
	try {
		placed = members
			? claimMemberSlot(
					storeRoot,
					members,
					limits.targets,
					owner(holder),
					queueTurns(storeRoot),
					new Set(members.filter((name) => limits.configs.get(name)?.drained === true)),
				)
			: undefined;
	} catch (error) {
		releaseSlot(held, holder);
		return { error: error instanceof Error ? error.message : String(error) };
	}
	if (members && !placed) {
		releaseSlot(held, holder);
		return "none";
	}
	const unhold = () => {
		releaseSlot(held, holder);
		releaseSlot(placed?.slot, holder);
	};
	let release;
	try {
		release = holdQueueLock(queueDir(storeRoot));
	} catch (error) {
		unhold();
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
			if (entry.runId !== holder) {
				writeJsonAtomic(held, owner(entry.runId, entry.rowId));
				if (placed) writeJsonAtomic(placed.slot, owner(entry.runId, entry.rowId));
			}
			holder = entry.runId;
			// Opened before the claim: a run that cannot get its log (a full disk) stays queued. Never through
			// a symlink planted as it (the runner's stderr would go there): that run fails, naming the file.
			let logFd;
			try {
				logFd = openAppend(join(runDir, "runner.log"));
			} catch (error) {
				if (!(error instanceof PlantedFileError)) throw error;
				if (claimHeld(storeRoot, name, runDir, "start")) recordStartFailure(runDir, error.message);
				continue;
			}
			let claimed;
			try {
				claimed = claimHeld(storeRoot, name, runDir, "start", held);
			} catch (error) {
				closeSync(logFd);
				throw error;
			}
			if (claimed)
				return { runDir, runId: entry.runId, rowId: entry.rowId, slot: held, logFd, ...(placed ? { placed } : {}) };
			closeSync(logFd);
		}
		unhold();
		return "none";
	} catch (error) {
		unhold();
		return { error: `cannot start the run${at}: ${error instanceof Error ? error.message : String(error)}` };
	} finally {
		release();
	}
}
