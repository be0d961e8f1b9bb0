// One container run, from this side: where its target-side dirs are on this machine (a target's layout
// under <store>/targets/<name>/, plus the pi home made for it) and whether its container runs.
import { join } from "node:path";
import { targetPaths } from "../../store/store-layout.mjs";
import { containerName, engineGlobalArgs, IN } from "./container-argv.mjs";
import { EngineError, engineRun } from "./container-engine.mjs";
import { isAlive, processStartTime } from "../../store/proc.mjs";

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
	return {
		layout: "container",
		runDir: IN.run,
		storeDir: "/tmp/ab-store",
		sessionFile: `${IN.session}/${rowId}.jsonl`,
		cwd: join(IN.workspace, subdir),
		extensionPath: `${IN.src}/index.ts`,
		tmp: IN.home,
	};
}

/**
 * What the engine says of the run's container, checked against the kernel where it runs here: the
 * engine's word "running" outlives its monitor (conmon killed: podman still says running, and `wait`
 * never returns, after the container's processes are gone), so a running container whose first process
 * (its pid and start time, read once) is gone counts as exited. A container that does not exist is
 * `{ running: false, gone: true }`; an engine that cannot answer throws its EngineError.
 * @param {ContainerRun} run @param {{ pid: number, start: string }} [first] its first process, as read before
 * @returns {Promise<{ running: boolean, gone?: boolean, exitCode?: number, oomKilled?: boolean, first?: { pid: number, start: string }, lost?: boolean }>}
 */
export async function containerState(run, first) {
	const { engine, engineHost } = run.target;
	let stdout;
	try {
		({ stdout } = await engineRun(
			engine,
			[
				...engineGlobalArgs(engine, engineHost),
				"container",
				"inspect",
				"--format",
				"{{.State.Running}} {{.State.Pid}} {{.State.ExitCode}} {{.State.OOMKilled}}",
				containerName(run.runId),
			],
			{ timeoutMs: 30_000 },
		));
	} catch (error) {
		if (error instanceof EngineError && error.code === "no-container") return { running: false, gone: true };
		throw error;
	}
	const [running, pidText, exitText, oom] = stdout.trim().split(/\s+/);
	const exitCode = Number(exitText);
	const state = {
		running: running === "true",
		...(Number.isInteger(exitCode) && running !== "true" ? { exitCode } : {}),
		oomKilled: oom === "true",
	};
	if (!state.running || engineHost) return state;
	// Its processes are on this machine: once its first process was seen here, the kernel has the last
	// word (one not visible here, an engine in a VM, leaves the engine's).
	if (first)
		return isAlive(first.pid, first.start) ? { ...state, first } : { ...state, running: false, lost: true, first };
	const pid = Number(pidText);
	const start = Number.isInteger(pid) && pid > 1 ? processStartTime(pid) : undefined;
	return start ? { ...state, first: { pid, start } } : state;
}

/** Whether the run's container is running (false when it exited or is gone). @param {ContainerRun} run */
export async function alive(run) {
	return (await containerState(run)).running;
}
