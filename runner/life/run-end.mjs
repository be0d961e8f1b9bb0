// Ending a run from outside, when its owner cannot record the end itself.
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { touchNotify, writeJsonAtomic } from "../store/fs-util.mjs";
import { rejectWaiting } from "./inbox.mjs";
import { finalize } from "./state-rules.mjs";

/**
 * Records why a claimed run never started (its owner, the claimer, does); messages waiting in its
 * inbox are answered, rejected, so no reply is left without a receipt.
 * @param {string} runDir @param {string} reason
 */
export function recordStartFailure(runDir, reason) {
	try {
		const statusPath = join(runDir, "status.json");
		const status = JSON.parse(readFileSync(statusPath, "utf8"));
		const now = Date.now();
		finalize(status, { code: null, signal: null, spawnError: reason, now });
		rejectWaiting(runDir, status, "not-started", now, "it failed before it started");
		writeJsonAtomic(statusPath, status);
		const rowDir = dirname(dirname(runDir));
		touchNotify(dirname(dirname(rowDir)), basename(rowDir));
	} catch {
		// Readers record "runner never started" once the start grace has passed.
	}
}

