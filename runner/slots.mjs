// Concurrency slots without a daemon: slots/slot-<n>.json, created with O_EXCL, naming the run that
// holds it and the process that claimed it. A slot is free only when its claimer is gone AND no
// process of its run is left (see RUN_TAG in proc.mjs): a killed runner whose worker or tools still
// run keeps its slot, so the limit holds whatever gets killed.
import { readFileSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { isAlive, runProcesses } from "./proc.mjs";
import { writeJsonAtomic } from "./fs-util.mjs";
import { breakStale, createExclusive } from "./owner-file.mjs";

/** A slot file still empty or unparsable after this long was left by a claimer killed mid-write. */
const GARBAGE_GRACE_MS = 2000;

/**
 * @typedef {object} SlotOwner
 * @property {number} pid
 * @property {string} [start]
 * @property {string} runId
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

/** True when nothing can still be using the slot at `path`. @param {string} path */
function isStale(path) {
	const owner = readOwner(path);
	if (owner === undefined) return false;
	if (owner === "garbage") return olderThan(path, GARBAGE_GRACE_MS);
	if (isAlive(owner.pid, owner.start)) return false;
	return runProcesses(owner.runId).length === 0;
}

/**
 * Tries to claim one of `max` slots; returns the claimed path or undefined when all are taken.
 * Errors other than "taken" (EACCES, ENOSPC...) are thrown with the path, so a stuck queue says why.
 * @param {string} dir @param {number} max @param {SlotOwner} owner
 */
export function tryClaimSlot(dir, max, owner) {
	/** @type {string[]} */
	const taken = [];
	for (let n = 0; n < max; n++) {
		const path = join(dir, `slot-${n}.json`);
		if (create(path, owner)) return path;
		taken.push(path);
	}
	// All taken: look for one whose run is over (a /proc scan, so only when we actually need a slot).
	for (const path of taken) {
		if (!isStale(path)) continue;
		// A live claimer that replaced it in between is put back.
		breakStale(path, (moved) => !isStale(moved));
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

/** Slot files whose run may still be using them (for observation in tests and benches). @param {string} dir @param {number} max */
export function liveSlots(dir, max) {
	let live = 0;
	for (let n = 0; n < max; n++) {
		const path = join(dir, `slot-${n}.json`);
		if (readOwner(path) !== undefined && !isStale(path)) live += 1;
	}
	return live;
}
