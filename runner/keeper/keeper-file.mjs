// The store's one keeper: keeper.json, an O_EXCL owner file holding the keeper's pid and start time
// (owner-file.mjs). Created by the keeper itself, so the pid it names is the process that runs the
// duties; broken only when that process is provably gone (its pid's start time differs, or the file
// never got its content). Two keepers started at once both try to create it: one wins, the other exits.
import { join } from "node:path";
import { statSync, unlinkSync } from "node:fs";
import { breakUnchanged, createExclusive, ownerText } from "../store/owner-file.mjs";
import { isAlive, processStartTime } from "../store/proc.mjs";

/** @param {string} storeRoot */
export const keeperPath = (storeRoot) => join(storeRoot, "keeper.json");

/** The keeper's record, when the file holds one. @param {string} text @returns {{ pid: number, start: string } | undefined} */
function parse(text) {
	try {
		const value = JSON.parse(text);
		return value && typeof value.pid === "number" && typeof value.start === "string" ? value : undefined;
	} catch {
		return undefined;
	}
}

/** A record still empty after this long belongs to a keeper that died between create and write. */
const EMPTY_GRACE_MS = 2000;

/** Whether the owner file's text names a live keeper (or one writing it now). @param {string} path @param {string} text */
function liveText(path, text) {
	const record = parse(text);
	if (record) return isAlive(record.pid, record.start);
	try {
		return Date.now() - statSync(path).mtimeMs < EMPTY_GRACE_MS;
	} catch {
		return false;
	}
}

/** Whether a keeper runs for the store: one read and one /proc stat. @param {string} storeRoot */
export function keeperAlive(storeRoot) {
	const path = keeperPath(storeRoot);
	const text = ownerText(path);
	return text !== undefined && liveText(path, text);
}

/**
 * Makes this process the store's keeper. Returns its release (which removes the file only while it is
 * still this process's), or undefined when another live keeper holds it.
 * @param {string} storeRoot
 */
export function claimKeeper(storeRoot) {
	const path = keeperPath(storeRoot);
	const mine = JSON.stringify({ pid: process.pid, start: processStartTime(process.pid), at: Date.now() });
	for (let attempt = 0; attempt < 2; attempt++) {
		if (createExclusive(path, mine))
			return { release: () => releaseIfMine(path, mine), held: () => ownerText(path) === mine };
		const text = ownerText(path);
		if (text === undefined) continue;
		if (liveText(path, text)) return undefined;
		breakUnchanged(path, text);
	}
	return undefined;
}

/** @param {string} path @param {string} mine */
function releaseIfMine(path, mine) {
	if (ownerText(path) !== mine) return;
	try {
		unlinkSync(path);
	} catch {
		// Already gone.
	}
}
