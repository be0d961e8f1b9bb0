// A pool's run that could not start on the member it was placed on (unreachable, refused, nothing
// started there) goes back to the pool's queue for another member instead of failing: a member that
// cannot take runs takes nothing (its link says so in health.json, and placement passes it over). Each
// member is tried once per run (placements.json); when every member has failed it, the run fails with
// their reasons. Called by the run's owner, its link, which hands the run back to the queue: a queued
// status, no claim, its queue entry back in its place (the one its start claim kept: it waited its turn
// once, and runs queued after it must not pass it now), then no owner record of its own (readers see the
// queue own it).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ensureDir, writeJsonAtomic } from "../store/fs-util.mjs";
import { readJsonObject, readProcessFile } from "../store/safe-read.mjs";
import { entryFrom, entryName, queuedEntryName } from "./queue-entries.mjs";
import { queueDir, withQueueLock } from "./queue-lock.mjs";
import { enqueue } from "./queue.mjs";
import { releaseSlot, slotOfRun, slotsOf } from "./slots.mjs";
import { initialStatus } from "./state-rules.mjs";

/** @typedef {{ member: string, reason: string, at: number }} Placement */

/** @param {string} runDir @returns {Placement[]} */
export function placementsOf(runDir) {
	try {
		const value = readJsonObject(join(runDir, "placements.json"));
		return Array.isArray(value?.tried)
			? value.tried.filter(
					(/** @type {Placement} */ p) => typeof p?.member === "string" && typeof p.reason === "string",
				)
			: [];
	} catch {
		return [];
	}
}

/**
 * Puts the run back in its pool's queue, or says why it cannot go back (every member failed it).
 * @param {{ storeDir: string, runDir: string, rowId: string, runId: string, createdAt: number, pool: string, member: string, members: string[], reason: string }} run
 * @returns {{ requeued: true } | { requeued: false, reason: string }}
 */
export function returnToPool(run) {
	const tried = [...placementsOf(run.runDir), { member: run.member, reason: run.reason, at: Date.now() }];
	writeJsonAtomic(join(run.runDir, "placements.json"), { tried });
	const failedOn = new Set(tried.map((p) => p.member));
	if (run.members.every((member) => failedOn.has(member))) {
		return {
			requeued: false,
			reason: `no member of ${run.pool} could start it (${tried.map((p) => `${p.member}: ${p.reason}`).join("; ")})`,
		};
	}
	writeJsonAtomic(join(run.runDir, "status.json"), {
		...initialStatus(run.runId, run.rowId, run.createdAt),
		summary: `back in ${run.pool}'s queue: ${run.member} could not start it (${run.reason})`,
	});
	const place = keptPlace(run);
	rmSync(join(run.runDir, "link.json"), { force: true });
	rmSync(join(run.runDir, "claim.json"), { force: true });
	// The pool's slot goes before the run is queued: once queued, a pump may place it again, and the
	// run's slot of the pool is then the new one (its old link must not free that: docs/engine-targets.md).
	releaseSlot(slotOfRun(slotsOf(run.storeDir, run.pool).dir, run.runId), run.runId);
	if (place) requeueAt(run.storeDir, place);
	else enqueue(run.storeDir, { rowId: run.rowId, runId: run.runId, target: run.pool });
	// Ours only: a pump may already have handed the run to another member's link, which names itself there.
	if (readProcessFile(join(run.runDir, "runner.json"))?.pid === process.pid)
		rmSync(join(run.runDir, "runner.json"), { force: true });
	return { requeued: true };
}

/**
 * The entry the run's start claim kept (claim.json /queued), when it is this run's in this pool.
 * @param {{ runDir: string, rowId: string, runId: string, pool: string }} run
 * @returns {import("./queue-entries.mjs").QueueEntry | undefined}
 */
function keptPlace(run) {
	const entry = entryFrom(readJsonObject(join(run.runDir, "claim.json"))?.queued);
	if (typeof entry === "string") return undefined;
	return entry.rowId === run.rowId && entry.runId === run.runId && entry.target === run.pool ? entry : undefined;
}

/**
 * Puts the entry back under its own name, holding the queue's lock, unless the run has one already.
 * @param {string} storeDir @param {import("./queue-entries.mjs").QueueEntry} entry
 */
function requeueAt(storeDir, entry) {
	ensureDir(queueDir(storeDir));
	withQueueLock(queueDir(storeDir), () => {
		if (!queuedEntryName(storeDir, entry.runId)) writeJsonAtomic(join(queueDir(storeDir), entryName(entry)), entry);
	});
}
