// Starting a run's runner (job-runner.mjs): a local run's, or a target's far run's. Detached, on the
// run's log, tagged by the caller. (A run that runs elsewhere is owned here by its target's link:
// target-link-owner.mjs.)
import { spawn } from "node:child_process";
import { closeSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { openAppend } from "../store/append-file.mjs";
import { RUN_TAG } from "../store/proc.mjs";
import { recordStartFailure } from "./run-end.mjs";
import { releaseSlot } from "./slots.mjs";

export const RUNNER_PATH = resolve(dirname(fileURLToPath(import.meta.url)), "../job-runner.mjs");

/**
 * Spawns the detached runner of a claimed run on its log fd (closed here; opened here when not given).
 * Its failure to start is recorded by the runner's absence: readers turn a claimed run with no runner
 * into "failed: runner never started".
 * @param {string} runDir @param {string} slot @param {string} node @param {NodeJS.ProcessEnv} env
 * @param {string} [script] @param {number} [logFd]
 */
export function spawnRunner(
	runDir,
	slot,
	node,
	env,
	script = RUNNER_PATH,
	logFd = openAppend(join(runDir, "runner.log")),
) {
	try {
		// A small young generation: a long stream's garbage is collected as it comes (about 30 MB less peak RSS).
		const child = spawn(node, ["--max-semi-space-size=2", script, join(runDir, "run.json"), slot], {
			detached: true,
			stdio: ["ignore", logFd, logFd],
			cwd: runDir,
			env,
		});
		child.on("error", (error) => {
			// The pumper claimed this run and still owns it: it records why the run never started.
			releaseSlot(slot, String(env[RUN_TAG]));
			recordStartFailure(runDir, `could not start the runner with ${node}: ${error.message}`);
		});
		child.unref();
		return child;
	} finally {
		closeSync(logFd);
	}
}
