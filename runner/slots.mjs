// Concurrency slots without a daemon: slot-<n>.json files created with O_EXCL by runners; a slot
// whose owner is dead (pid + start time) is reclaimed.
import { closeSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { isAlive } from "./proc.mjs";
import { FILE_MODE } from "./fs-util.mjs";

/**
 * @typedef {object} SlotOwner
 * @property {number} pid
 * @property {string} [start]
 * @property {string} runId
 */

/** @param {string} path @returns {SlotOwner | undefined} */
function readOwner(path) {
	try {
		return /** @type {SlotOwner} */ (JSON.parse(readFileSync(path, "utf8")));
	} catch {
		return undefined;
	}
}

/**
 * Tries to claim one of `max` slots; returns the claimed path or undefined when all are taken.
 * @param {string} dir @param {number} max @param {SlotOwner} owner
 */
export function tryClaimSlot(dir, max, owner) {
	for (let n = 0; n < max; n++) {
		const path = join(dir, `slot-${n}.json`);
		if (create(path, owner)) return path;
		const current = readOwner(path);
		// A half-written slot file (owner still writing) reads as undefined; leave it alone.
		if (current && !isAlive(current.pid, current.start)) {
			reclaim(path, current, owner.runId);
			if (create(path, owner)) return path;
		}
	}
	return undefined;
}

/** @param {string} path @param {SlotOwner} owner */
function create(path, owner) {
	let fd;
	try {
		fd = openSync(path, "wx", FILE_MODE);
	} catch {
		return false;
	}
	writeSync(fd, JSON.stringify(owner));
	closeSync(fd);
	return true;
}

/**
 * Moves a stale slot aside; if another runner replaced it in between, puts the live one back.
 * @param {string} path @param {SlotOwner} stale @param {string} runId
 */
function reclaim(path, stale, runId) {
	const aside = `${path}.reclaim-${runId}`;
	try {
		renameSync(path, aside);
	} catch {
		return;
	}
	const moved = readOwner(aside);
	if (moved && (moved.runId !== stale.runId || moved.pid !== stale.pid)) {
		try {
			linkSync(aside, path);
		} catch {
			// Someone claimed the path again meanwhile; the moved owner keeps running regardless.
		}
	}
	try {
		unlinkSync(aside);
	} catch {
		// Already gone.
	}
}

/** @param {string | undefined} path @param {string} runId */
export function releaseSlot(path, runId) {
	if (!path) return;
	const owner = readOwner(path);
	if (owner && owner.runId !== runId) return;
	try {
		unlinkSync(path);
	} catch {
		// Already released or reclaimed.
	}
}

/** Number of slot files held by live owners (for observation in tests and benches). @param {string} dir @param {number} max */
export function liveSlots(dir, max) {
	let live = 0;
	for (let n = 0; n < max; n++) {
		const owner = readOwner(join(dir, `slot-${n}.json`));
		if (owner && isAlive(owner.pid, owner.start)) live += 1;
	}
	return live;
}
