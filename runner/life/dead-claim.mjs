// A run whose claimer died after taking its entry and before the run's runner started (a runner killed
// while it pumped at its end, a pi closed mid-pump) goes back to its place in the queue: the claim keeps
// its entry, and the reader that finds the run without an owner (the start grace over, no runner ever
// recorded, no process of the run) puts that entry back under its own name, ahead of every entry that
// entered after it. A run that failed to start, or that a stopper claimed, never goes back.
import { existsSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { writeJsonAtomic } from "../store/fs-util.mjs";
import { isAlive } from "../store/proc.mjs";
import { ownerText } from "../store/owner-file.mjs";
import { runDirOf } from "../store/store-layout.mjs";
import { entryFrom, entryName } from "./queue-entries.mjs";
import { queueDir, withQueueLock } from "./queue-lock.mjs";
import { releaseRunSlots } from "./slots.mjs";
import { readJsonObject } from "../store/safe-read.mjs";

/** @typedef {import("./queue-entries.mjs").QueueEntry} QueueEntry */

/**
 * The entry to put back, from the claim's text: the entry itself (its claimer died between the rename
 * and the claim's write, which it makes holding the queue's lock), or a start claim's `queued` when its
 * claimer is not alive. Undefined for a live claimer's, a stop's, or one that names another run.
 * @param {string} storeRoot @param {string} runDir @param {string | undefined} text
 * @returns {QueueEntry | undefined}
 */
function entryOf(storeRoot, runDir, text) {
	let claim;
	try {
		claim = JSON.parse(text ?? "");
	} catch {
		return undefined;
	}
	if (!claim || typeof claim !== "object") return undefined;
	const dead =
		claim.by === undefined
			? claim
			: claim.purpose === "start" && !isAlive(claim.by, claim.start)
				? claim.queued
				: undefined;
	const entry = entryFrom(dead);
	if (typeof entry === "string" || runDirOf(storeRoot, entry.rowId, entry.runId) !== runDir) return undefined;
	return entry;
}

/** Whether the run never recorded a runner and has not ended. @param {string} runDir */
function neverStarted(runDir) {
	if (existsSync(join(runDir, "runner.json"))) return false;
	const status = readJsonObject(join(runDir, "status.json"));
	return status?.state === "queued" && status.endedAt === undefined;
}

/**
 * Whether a run found without an owner is one whose claimer died before its runner started (what a
 * read shows: still queued, going back). A file read and a /proc stat; no lock.
 * @param {string} storeRoot @param {string} runDir
 */
export function isDeadClaim(storeRoot, runDir) {
	return neverStarted(runDir) && entryOf(storeRoot, runDir, ownerText(join(runDir, "claim.json"))) !== undefined;
}

/**
 * Puts a dead claimer's run back in its place. For a run its caller found without an owner (runOwner:
 * the claim is older than the start grace and no process of the run is left, a runner its claimer spawned
 * would be one), holding its row lock. Judged first without the queue's lock, then, holding it, only if
 * the claim is still what was judged: the entry goes back under its own name, the slot the dead claimer
 * named for the run is freed, and the claim goes. Returns whether it went back.
 * @param {string} storeRoot @param {string} runDir
 */
export function returnDeadClaim(storeRoot, runDir) {
	const claimPath = join(runDir, "claim.json");
	const judged = ownerText(claimPath);
	const entry = neverStarted(runDir) ? entryOf(storeRoot, runDir, judged) : undefined;
	if (!entry) return false;
	return withQueueLock(queueDir(storeRoot), () => {
		// A claim without its claimer's record is judged again now: a live claimer would have written it.
		if (ownerText(claimPath) !== judged || !neverStarted(runDir) || entryOf(storeRoot, runDir, judged) === undefined)
			return false;
		releaseRunSlots(storeRoot, entry.runId, (fn) => fn());
		// The entry first: a reader looking for the run finds it in one of the two.
		writeJsonAtomic(join(queueDir(storeRoot), entryName(entry)), entry);
		unlinkSync(claimPath);
		return true;
	});
}
