// Concurrency slots without a daemon: slots/slot-<n>.json, created with O_EXCL, naming the run that
// holds it and the process that claimed it. A slot is free only when its claimer is gone AND no
// process of its run is left (see RUN_TAG in proc.mjs): a killed runner whose worker or tools still
// run keeps its slot, so the limit holds whatever gets killed. A target's slot (targets/<name>/slots/)
// also holds while its run is not over: the run goes on at the target when our link dies.
import { readdirSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { LOCAL_TARGET, TARGET_NAME } from "./vocabulary.mjs";
import { isAlive, runProcesses } from "../store/proc.mjs";
import { writeJsonAtomic } from "../store/fs-util.mjs";
import { breakUnchanged, createExclusive, ownerText } from "../store/owner-file.mjs";
import { queueSteps, queueTurns } from "./queue-lock.mjs";
import { isValidId, runDirOf } from "../store/store-layout.mjs";
import { readTextNoFollow } from "../store/safe-read.mjs";

/** A slot file still empty or unparsable after this long was left by a claimer killed mid-write. */
const GARBAGE_GRACE_MS = 2000;

/**
 * @typedef {object} SlotOwner
 * @property {number} pid
 * @property {string} [start]
 * @property {string} runId
 * @property {string} [rowId]  a target slot's row (its run's status tells whether the run is over)
 */

/**
 * Whether a slot stays taken beyond its processes (a target run that is not over).
 * @typedef {(owner: SlotOwner) => boolean} HoldsSlot
 */

/**
 * Runs the break of a slot judged stale, one breaker at a time (the queue's lock): judged from a /proc
 * scan, a slot can be re-created by another breaker before the break, and must not be moved then.
 * @typedef {(breakIt: () => void) => void} TakeTurns
 */

/** @type {TakeTurns} */
const alone = (breakIt) => breakIt();

/** @param {string} path @returns {SlotOwner | "garbage" | undefined} */
function readOwner(path) {
	let text;
	try {
		text = readTextNoFollow(path);
	} catch (error) {
		return /** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT" ? undefined : "garbage";
	}
	return ownerOf(text);
}

/** @param {string} text @returns {SlotOwner | "garbage"} */
function ownerOf(text) {
	try {
		const value = JSON.parse(text);
		if (value && typeof value === "object" && typeof value.runId === "string" && typeof value.pid === "number")
			return value;
	} catch {
		// Fall through: not an owner record.
	}
	return "garbage";
}

/** @param {string} path @param {number} ms */
function olderThan(path, ms) {
	try {
		return Date.now() - statSync(path).mtimeMs > ms;
	} catch {
		return false;
	}
}

/** True when nothing can still be using the slot at `path`. @param {string} path @param {HoldsSlot} [holds] */
function isStale(path, holds) {
	return staleText(path, holds) !== undefined;
}

/** The text of the slot at `path` when nothing can still be using it. @param {string} path @param {HoldsSlot} [holds] */
function staleText(path, holds) {
	const text = ownerText(path);
	if (text === undefined) return undefined;
	const owner = ownerOf(text);
	if (owner === "garbage") return olderThan(path, GARBAGE_GRACE_MS) ? text : undefined;
	if (isAlive(owner.pid, owner.start)) return undefined;
	return runProcesses(owner.runId).length === 0 && !holds?.(owner) ? text : undefined;
}

/** Breaks the slot at `path` if it is stale, in its turn. @param {string} path @param {HoldsSlot | undefined} holds @param {TakeTurns} turns */
function breakIfStale(path, holds, turns) {
	const judged = staleText(path, holds);
	if (judged !== undefined) turns(() => breakUnchanged(path, judged));
}

/**
 * Tries to claim one of `max` slots; returns the claimed path or undefined when all are taken.
 * Errors other than "taken" (EACCES, ENOSPC...) are thrown with the path, so a stuck queue says why.
 * @param {string} dir @param {number} max @param {SlotOwner} owner @param {HoldsSlot} [holds] @param {TakeTurns} [turns]
 */
export function tryClaimSlot(dir, max, owner, holds, turns = alone) {
	/** @type {string[]} */
	const taken = [];
	for (let n = 0; n < max; n++) {
		const path = join(dir, `slot-${n}.json`);
		if (create(path, owner)) return path;
		taken.push(path);
	}
	// All taken: look for one whose run is over (a /proc scan, so only when we actually need a slot).
	for (const path of taken) {
		breakIfStale(path, holds, turns);
		if (create(path, owner)) return path;
	}
	return undefined;
}

/** @param {string} path @param {SlotOwner} owner */
function create(path, owner) {
	try {
		return createExclusive(path, JSON.stringify(owner));
	} catch (error) {
		const e = /** @type {NodeJS.ErrnoException} */ (error);
		throw new Error(
			`cannot claim a concurrency slot: ${path}: ${e.code ? `${e.code} (${e.message})` : String(error)}`,
		);
	}
}

/**
 * The runner takes over the slot its pumper claimed, so the slot's liveness follows the runner and not
 * a long-lived pi that happened to pump. Safe without a lock: nobody reclaims a slot whose run has a
 * live process, and the runner is one.
 * @param {string} path @param {SlotOwner} owner
 */
export function adoptSlot(path, owner) {
	const current = readOwner(path);
	if (!current || current === "garbage" || current.runId !== owner.runId) return false;
	writeJsonAtomic(path, owner);
	return true;
}

/** @param {string | undefined} path @param {string} runId */
export function releaseSlot(path, runId) {
	if (!path) return;
	const owner = readOwner(path);
	if (!owner || owner === "garbage" || owner.runId !== runId) return;
	queueSteps.at("release", path);
	try {
		unlinkSync(path);
	} catch {
		// Already released or reclaimed.
	}
}

/**
 * Removes the slot files of `dir` whose run is over (claimer gone, no process of the run left): a
 * runner killed after it recorded its end, before it freed its slot, leaves one that no claim needs
 * while slots are free. Costs a file read per slot; /proc is scanned only for a dead claimer.
 * @param {string} dir @param {HoldsSlot} [holds] @param {TakeTurns} [turns]
 */
export function sweepStaleSlots(dir, holds, turns = alone) {
	let names;
	try {
		names = readdirSync(dir);
	} catch {
		return;
	}
	for (const name of names) {
		if (!/^slot-\d+\.json$/.test(name)) continue;
		breakIfStale(join(dir, name), holds, turns);
	}
}

/** Slot files whose run may still be using them. @param {string} dir @param {number} max @param {HoldsSlot} [holds] */
export function liveSlots(dir, max, holds) {
	let live = 0;
	for (let n = 0; n < max; n++) {
		const path = join(dir, `slot-${n}.json`);
		if (readOwner(path) !== undefined && !isStale(path, holds)) live += 1;
	}
	return live;
}

/** The slot file in `dir` that names `runId` (a respawned link takes its run's slot over). @param {string} dir @param {string} runId */
export function slotOfRun(dir, runId) {
	let names;
	try {
		names = readdirSync(dir);
	} catch {
		return undefined;
	}
	for (const name of names) {
		if (!/^slot-\d+\.json$/.test(name)) continue;
		const owner = readOwner(join(dir, name));
		if (owner && owner !== "garbage" && owner.runId === runId) return join(dir, name);
	}
	return undefined;
}

/** Slots of a target, and what else holds one: a target run goes on while our link is gone. @param {string} storeRoot @param {string} target */
export function slotsOf(storeRoot, target) {
	if (target === LOCAL_TARGET) return { dir: join(storeRoot, "slots"), holds: undefined };
	return {
		dir: join(storeRoot, "targets", target, "slots"),
		holds: (/** @type {SlotOwner} */ owner) => runNotOver(storeRoot, owner),
	};
}

/**
 * Frees the slot a run still holds once its end is recorded from outside (its runner was killed): now,
 * not whenever a later claim finds every slot taken. Only the run's own slot file goes, in its turn (the
 * queue's lock; `turns` for a caller that holds it): the slot of a dead run is stale, and a pump may
 * break it and take it between this reader's look and its unlink, which must not free the pump's.
 * @param {string} storeRoot @param {string} runId @param {TakeTurns} [turns]
 */
export function releaseRunSlots(storeRoot, runId, turns = queueTurns(storeRoot)) {
	/** @type {string[]} */
	let targets = [];
	try {
		targets = readdirSync(join(storeRoot, "targets")).filter((name) => TARGET_NAME.test(name));
	} catch {
		// No targets.
	}
	const found = [slotsOf(storeRoot, LOCAL_TARGET).dir, ...targets.map((name) => slotsOf(storeRoot, name).dir)].flatMap(
		(dir) => slotOfRun(dir, runId) ?? [],
	);
	if (found.length === 0) return;
	turns(() => {
		for (const path of found) releaseSlot(path, runId);
	});
}

/** A target slot's run is over when its status says so (or its row is gone). @param {string} storeRoot @param {SlotOwner} owner */
function runNotOver(storeRoot, owner) {
	if (!owner.rowId || !isValidId(owner.rowId) || !isValidId(owner.runId)) return false;
	try {
		const status = JSON.parse(readTextNoFollow(join(runDirOf(storeRoot, owner.rowId, owner.runId), "status.json")));
		return typeof status?.endedAt !== "number";
	} catch (error) {
		return /** @type {NodeJS.ErrnoException} */ (error).code !== "ENOENT";
	}
}
