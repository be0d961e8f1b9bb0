// Ending a run at a target from the outside (the channel's stop, follow after a host reboot): the
// runner is asked through the inbox first, then signalled, then every process of the run (tagged with
// its far tag, proc.mjs runTag: never the link's, which may be on this machine as this user) is ended,
// each verified by its start time. An end the runner could not record is
// recorded by life/run-end.mjs endOrphan, under the target store's row lock, as the board does here.
import { basename, join } from "node:path";
import { dropMessage } from "../life/inbox.mjs";
import { diedEnd, endOrphan, stoppedEnd } from "../life/run-end.mjs";
import { endRunProcesses, isAlive, runProcesses, runTag, signalVerified } from "../store/proc.mjs";
import { readProcessFile, safeStatus } from "../store/safe-read.mjs";

/** A far run's processes carry this tag (the run's id, for a link, is not theirs). @param {string} runId */
const farTag = (runId) => runTag(runId, "target");

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
 * Whether a process carrying the run's far tag is there: before its runner recorded itself, the run is
 * still starting (a runner slow to start on a busy host is not a dead one). A /proc scan: ask it only once
 * the start grace is over.
 * @param {string} runDir
 */
export function farRunStarting(runDir) {
	return runProcesses(farTag(basename(runDir))).length > 0;
}

/**
 * Records the end of a run at a target whose runner is gone without recording it (a host reboot),
 * after ending what is left of its processes. `alive`: when runner.json cannot tell (a container's pid).
 * @param {string} runDir @param {{ alive?: () => boolean }} [options]
 */
export function recordDeath(runDir, options = {}) {
	return endOrphan(runDir, diedEnd(runDir), {
		alive: options.alive ?? (() => runnerAlive(runDir)),
		kill: { graceMs: 200, tag: farTag },
	});
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
	// Always asked first: a runner that starts after this (a launch given up mid-way) finds the stop waiting.
	if (typeof status.endedAt !== "number") dropMessage(runDir, { kind: "stop" });
	if (runner && isAlive(runner.pid, runner.start)) {
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
	const left = await endRunProcesses(farTag(runId), { graceMs: 500 });
	const final =
		typeof safeStatus(runDir)?.endedAt === "number"
			? safeStatus(runDir)
			: await endOrphan(runDir, stoppedEnd(), {
					alive: () => runnerAlive(runDir),
					kill: { graceMs: 200, tag: farTag },
				});
	return { status: final, left };
}
