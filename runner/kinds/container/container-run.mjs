// One container run, from this side: where its target-side dirs are on this machine (a target's layout
// under <store>/targets/<name>/, plus the pi home made for it) and whether its container runs.
import { join } from "node:path";
import { targetPaths } from "../../store/store-layout.mjs";
import { containerName, engineGlobalArgs, IN } from "./container-argv.mjs";
import { EngineError, engineRun } from "./container-engine.mjs";

/** @typedef {import("../../link/driver.mjs").LinkRun & { target: import("./container-argv.mjs").ContainerTarget }} ContainerRun */

/** A container run's dirs on this machine. @param {ContainerRun} run */
export function containerDirs(run) {
	const dir = join(run.storeDir, "targets", run.target.name);
	return { dir, ...targetPaths(dir, run.rowId, run.runId), piHome: join(dir, "pi", run.runId) };
}

/**
 * Where the run's files are as its runner sees them inside: the mount points of container-argv.mjs.
 * @param {string} rowId @param {string} [subdir] @returns {import("../../far/far-run.mjs").FarPlace}
 */
export function containerPlace(rowId, subdir = "") {
	return { layout: "container", runDir: IN.run, storeDir: "/tmp/ab-store", sessionFile: `${IN.session}/${rowId}.jsonl`, cwd: join(IN.workspace, subdir), extensionPath: `${IN.src}/index.ts`, tmp: IN.home };
}

/** Whether the run's container is running (false when it exited or is gone). @param {ContainerRun} run */
export async function alive(run) {
	const { engine, engineHost } = run.target;
	try {
		const { stdout } = await engineRun(engine, [...engineGlobalArgs(engine, engineHost), "container", "inspect", "--format", "{{.State.Running}}", containerName(run.runId)], { timeoutMs: 30_000 });
		return stdout.trim() === "true";
	} catch (error) {
		if (error instanceof EngineError && error.code === "no-container") return false;
		throw error;
	}
}

