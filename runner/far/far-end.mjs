// Ending a run at a target from the outside (host-agent.mjs stop, follow after a host reboot): the
// runner is asked through the inbox first, then signalled, then every process of the run (tagged with
// its run id) is ended, each verified by its start time. An end the runner could not record is
// recorded once, under the target store's row lock, as the local board does for a dead runner.
import { dirname, join } from "node:path";
import { touchNotify, writeJsonAtomic } from "../store/fs-util.mjs";
import { claimMessages, dropMessage, writeReceipt } from "../life/inbox.mjs";
import { endRunProcesses, isAlive, signalVerified } from "../store/proc.mjs";
import { tryLockRow } from "../store/row-lock.mjs";
import { markRunnerDied, markStopped, summarize } from "../life/state-rules.mjs";
import { readProcessFile, safeStatus } from "./safe-read.mjs";

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @param {string} runDir */
function runnerOf(runDir) {
	return readProcessFile(join(runDir, "runner.json"));
}

/** @param {string} runDir */
export function runnerAlive(runDir) {
	const runner = runnerOf(runDir);
	return !!runner && isAlive(runner.pid, runner.start);
}

/**
 * Records the end of a run whose runner is gone without having recorded it; once, under the row
 * lock. Returns the status as it is now (another holder of the lock is recording the same end).
 * @param {string} runDir @param {"died" | "stopped"} how
 * @param {() => boolean} [alive] the runner's liveness when runner.json cannot tell (a container's pid)
 * @param {string} [reason] why it died, when the caller knows better than "runner died" (a container's exit)
 */
export async function recordFarEnd(runDir, how, alive = () => runnerAlive(runDir), reason = undefined) {
	const rowDir = dirname(dirname(runDir));
	const release = tryLockRow(rowDir);
	if (!release) return safeStatus(runDir);
	try {
		const status = safeStatus(runDir);
		if (!status || typeof status.endedAt === "number" || alive()) return status;
		await endRunProcesses(String(status.runId), { graceMs: 200 });
		const now = Date.now();
		const ended = /** @type {import("../life/state-rules.mjs").RunStatus} */ (/** @type {unknown} */ (status));
		if (how === "stopped") markStopped(ended, now);
		else {
			markRunnerDied(ended, now);
			if (reason) {
				ended.error = reason;
				ended.summary = summarize(ended);
			}
		}
		for (const message of claimMessages(runDir)) {
			writeReceipt(runDir, { id: message.id, status: "rejected", reason: "run ended", at: now, preview: "" });
		}
		writeJsonAtomic(join(runDir, "status.json"), ended);
		touchNotify(dirname(dirname(rowDir)), String(status.rowId));
		return /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (ended));
	} finally {
		release();
	}
}

/**
 * Stops a run for good: a stop message (the runner aborts the worker as locally), then the runner's
 * TERM/KILL, then every process of the run. Resolves with the final status and how many processes of
 * the run were still alive at the end (0 unless something refused to die).
 * @param {string} runDir @param {{ graceMs?: number }} [options]
 */
export async function stopFarRun(runDir, options = {}) {
	const grace = options.graceMs ?? 8000;
	const status = safeStatus(runDir);
	const runId = String(status?.runId ?? "");
	if (!status || !runId) throw new Error(`no run at ${runDir}`);
	const runner = runnerOf(runDir);
	if (runner && isAlive(runner.pid, runner.start)) {
		if (typeof status.endedAt !== "number") dropMessage(runDir, { kind: "stop" });
		const deadline = Date.now() + grace;
		while (Date.now() < deadline && isAlive(runner.pid, runner.start)) {
			const now = safeStatus(runDir);
			// A needs_input run waits in place with its runner alive: the stop message ends it too.
			if (typeof now?.endedAt === "number" && now.state !== "needs_input") break;
			await sleep(50);
		}
		if (signalVerified(runner.pid, runner.start, "SIGTERM")) {
			const until = Date.now() + 2000;
			while (Date.now() < until && isAlive(runner.pid, runner.start)) await sleep(50);
		}
		signalVerified(runner.pid, runner.start, "SIGKILL");
	}
	const left = await endRunProcesses(runId, { graceMs: 500 });
	const final = typeof safeStatus(runDir)?.endedAt === "number" ? safeStatus(runDir) : await recordFarEnd(runDir, "stopped");
	return { status: final, left };
}
