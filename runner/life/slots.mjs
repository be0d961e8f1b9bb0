// Concurrency slots without a daemon: slots/slot-<n>.json, created with O_EXCL, naming the run that
// holds it and the process that claimed it. A slot is free only when its claimer is gone AND no
// process of its run is left (see RUN_TAG in proc.mjs): a killed runner whose worker or tools still
// run keeps its slot, so the limit holds whatever gets killed. A target's slot (targets/<name>/slots/)
// also holds while its run is not over: the run goes on at the target when our link dies.
import { readdirSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { LOCAL_TARGET, TARGET_NAME } from "./vocabulary.mjs";
import { isAlive, runProcesses } from "../store/proc.mjs";
import { writeJsonAtomic } from "../store/fs-util.mjs";
import { breakStale, createExclusive } from "../store/owner-file.mjs";
import { isValidId, runDirOf } from "../store/store-layout.mjs";

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

/** @param {string} path @returns {SlotOwner | "garbage" | undefined} */
function readOwner(path) {
	let text;
	try {
		text = readFileSync(path, "utf8");
	} catch (error) {
		return /** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT" ? undefined : "garbage";
	}
	try {
		const value = JSON.parse(text);
		if (value && typeof value === "object" && typeof value.runId === "string" && typeof value.pid === "number") return value;
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
	const owner = readOwner(path);
	if (owner === undefined) return false;
	if (owner === "garbage") return olderThan(path, GARBAGE_GRACE_MS);
	if (isAlive(owner.pid, owner.start)) return false;
	return runProcesses(owner.runId).length === 0 && !holds?.(owner);
}

/**
 * Tries to claim one of `max` slots; returns the claimed path or undefined when all are taken.
 * Errors other than "taken" (EACCES, ENOSPC...) are thrown with the path, so a stuck queue says why.
 * @param {string} dir @param {number} max @param {SlotOwner} owner @param {HoldsSlot} [holds]
 */
export function tryClaimSlot(dir, max, owner, holds) {
	/** @type {string[]} */
	const taken = [];
	for (let n = 0; n < max; n++) {
		const path = join(dir, `slot-${n}.json`);
		if (create(path, owner)) return path;
		taken.push(path);
	}
	// All taken: look for one whose run is over (a /proc scan, so only when we actually need a slot).
	for (const path of taken) {
		if (!isStale(path, holds)) continue;
		// A live claimer that replaced it in between is put back.
		breakStale(path, (moved) => !isStale(moved, holds));
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
		throw new Error(`cannot claim a concurrency slot: ${path}: ${e.code ? `${e.code} (${e.message})` : String(error)}`);
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
 * @param {string} dir @param {HoldsSlot} [holds]
 */
export function sweepStaleSlots(dir, holds) {
	let names;
	try {
		names = readdirSync(dir);
	} catch {
		return;
	}
	for (const name of names) {
		if (!/^slot-\d+\.json$/.test(name)) continue;
		const path = join(dir, name);
		if (isStale(path, holds)) breakStale(path, (moved) => !isStale(moved, holds));
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
	return { dir: join(storeRoot, "targets", target, "slots"), holds: (/** @type {SlotOwner} */ owner) => runNotOver(storeRoot, owner) };
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

/** A target slot's run is over when its status says so (or its row is gone). @param {string} storeRoot @param {SlotOwner} owner */
function runNotOver(storeRoot, owner) {
	if (!owner.rowId || !isValidId(owner.rowId) || !isValidId(owner.runId)) return false;
	try {
		const status = JSON.parse(readFileSync(join(runDirOf(storeRoot, owner.rowId, owner.runId), "status.json"), "utf8"));
		return typeof status?.endedAt !== "number";
	} catch (error) {
		return /** @type {NodeJS.ErrnoException} */ (error).code !== "ENOENT";
	}
}
