// A run nobody owns any more. A read shows it as what it will be (`derive`: its end at once, on a
// target waiting for a new link, or queued again); the board's settle step and its explicit actions
// (reply, stop) write that down under the row lock, once (`settleUnowned`): a run whose claimer died
// before its runner started goes back to its place in the queue (dead-claim.mjs); a target run a new
// link can take over gets one (it goes on at the target); any other has its end recorded, the one
// readers derived, or its stop.
import { dirname } from "node:path";
import { tryLockRow } from "../store/row-lock.mjs";
import { safeStatus } from "../store/safe-read.mjs";
import { isDeadClaim, returnDeadClaim } from "./dead-claim.mjs";
import { relink, relinkable } from "./relink.mjs";
import { diedEnd, endedStatus, endOrphan, stoppedEnd } from "./run-end.mjs";
import { runOwner } from "./run-owner.mjs";
import { runEnded } from "./state-rules.mjs";

/**
 * What a reader shows of a run, and what is still to be written about it: its end (`pending: "end"`,
 * the status shown is the one endRun will write), a new link (`pending: "relink"`) or its entry back in
 * the queue (`pending: "requeue"`, shown queued).
 * @param {string} storeRoot @param {string} runDir @param {import("./state-rules.mjs").RunStatus} status @param {{ target?: string }} row
 * @returns {{ status: import("./state-rules.mjs").RunStatus, owner: import("./run-owner.mjs").RunOwner, alive: boolean, pending?: "end" | "relink" | "requeue" }}
 */
export function derive(storeRoot, runDir, status, row) {
	const owner = runOwner(storeRoot, runDir, status);
	const alive = owner === "runner" || owner === "starting";
	if (owner !== "none" || runEnded(status)) return { status, owner, alive };
	if (isDeadClaim(storeRoot, runDir)) return { status, owner, alive, pending: "requeue" };
	if (row.target && relinkable(runDir)) return { status, owner, alive, pending: "relink" };
	return { status: endedStatus(status, diedEnd(runDir)), owner, alive, pending: "end" };
}

/**
 * What became of a run found without an owner: still "owned" (an owner appeared, or another process
 * holds the row and is deciding), "requeued" (its claimer died before its runner started: unless it is
 * being stopped, it waits in its place again), "relinked", or "ended" (recorded now, or before).
 * @param {string} storeRoot @param {string} runDir
 * @param {{ target?: string, how?: "died" | "stopped", spawnWith: { node: string, env: NodeJS.ProcessEnv }, lockHeld?: boolean }} options
 * @returns {Promise<"owned" | "requeued" | "relinked" | "ended">}
 */
export async function settleUnowned(storeRoot, runDir, options) {
	const release = options.lockHeld ? () => undefined : tryLockRow(dirname(dirname(runDir)));
	if (!release) return "owned";
	try {
		const status = /** @type {import("./state-rules.mjs").RunStatus | undefined} */ (safeStatus(runDir));
		if (!status || typeof status.endedAt === "number") return "ended";
		/** @param {import("./state-rules.mjs").RunStatus} fresh */
		const owned = (fresh) => runOwner(storeRoot, runDir, fresh) !== "none";
		if (owned(status)) return "owned";
		if (options.how !== "stopped" && returnDeadClaim(storeRoot, runDir)) return "requeued";
		if (options.target && relink(storeRoot, runDir, options.target, options.spawnWith)) return "relinked";
		await endOrphan(runDir, options.how === "stopped" ? stoppedEnd() : () => diedEnd(runDir), {
			alive: owned,
			kill: { graceMs: 0 },
			lockHeld: true,
		});
		return "ended";
	} finally {
		release();
	}
}
