// When a run's container is over, as the link's container driver follows it: `engine wait`, which
// answers with the exit code, held to what is true. A wait client of ours that dies (killed, the engine
// hiccupped) is not the container's end: the engine is asked again and the wait goes on while it runs.
// And `wait` alone can hang for ever: with its monitor (conmon) killed, podman never learns the
// container exited and keeps saying "running"; so its first process is watched here too (pid and start
// time, container-run.mjs containerState), and its disappearance is the end.
import { spawn } from "node:child_process";
import { containerName, engineGlobalArgs } from "./container-argv.mjs";
import { engineEnv, engineFailure } from "./container-engine.mjs";
import { containerState } from "./container-run.mjs";
import { isAlive } from "../../store/proc.mjs";

/** How often the container's first process is looked for (one /proc read; the engine is asked only when it is gone). */
const WATCH_MS = 2000;
/** After its first process is gone, how long `engine wait` gets to say the exit code before the engine is asked. */
const EXIT_CODE_GRACE_MS = 3000;
/** A wait client that died is started again after this. */
const REWAIT_MS = 1000;

/**
 * How the container ended: its exit code when the engine knew it (null: gone, --rm, or never recorded),
 * `lost` when the engine lost track of it (its monitor died: the container's processes are gone while the
 * engine still says it runs), `oomKilled` when the engine says the kernel killed it for memory.
 * @typedef {{ code: number | null, lost?: boolean, oomKilled?: boolean, error?: import("./container-engine.mjs").EngineError }} ContainerExit
 */

/**
 * Resolves when the run's container has exited or is gone, and never before. A cancelled wait never
 * resolves (its caller stopped following; the run has not ended).
 * @param {import("./container-run.mjs").ContainerRun} run
 * @returns {{ done: Promise<ContainerExit>, cancel(): void }}
 */
export function waitContainer(run) {
	const { engine, engineHost } = run.target;
	let cancelled = false;
	let settled = false;
	/** @type {import("node:child_process").ChildProcess | undefined} */
	let child;
	/** @type {NodeJS.Timeout | undefined} */
	let watcher;
	/** @type {NodeJS.Timeout | undefined} */
	let rewait;
	/** @type {NodeJS.Timeout | undefined} */
	let grace;
	/** @type {{ pid: number, start: string } | undefined} */
	let first;
	/** @type {(exit: ContainerExit) => void} */
	let resolveDone = () => undefined;
	/** @type {Promise<ContainerExit>} */
	const done = new Promise((resolve) => (resolveDone = resolve));

	function stopTimers() {
		if (watcher) clearInterval(watcher);
		if (rewait) clearTimeout(rewait);
		if (grace) clearTimeout(grace);
	}

	/** @param {ContainerExit} exit */
	function settle(exit) {
		if (settled || cancelled) return;
		settled = true;
		stopTimers();
		child?.kill("SIGTERM");
		resolveDone(exit);
	}

	/** Asks the engine (and the kernel) whether it still runs: settles if not. */
	async function check() {
		if (settled || cancelled) return;
		let state;
		try {
			state = await containerState(run, first);
		} catch {
			// The engine cannot answer now: nothing is concluded from that.
			return;
		}
		first ??= state.first;
		if (!state.running)
			settle({
				code: state.exitCode ?? null,
				...(state.lost ? { lost: true } : {}),
				...(state.oomKilled ? { oomKilled: true } : {}),
			});
	}

	function waitOnce() {
		if (settled || cancelled) return;
		const client = spawn(engine, [...engineGlobalArgs(engine, engineHost), "wait", containerName(run.runId)], {
			stdio: ["ignore", "pipe", "pipe"],
			env: engineEnv(),
		});
		child = client;
		let stdout = "";
		let stderr = "";
		client.stdout.setEncoding("utf8").on("data", (/** @type {string} */ chunk) => (stdout += chunk));
		client.stderr
			.setEncoding("utf8")
			.on("data", (/** @type {string} */ chunk) => (stderr = (stderr + chunk).slice(-8000)));
		client.on("error", (spawnError) => settle({ code: null, error: engineFailure(engine, { spawnError }) }));
		client.on("close", (code) => {
			if (settled || cancelled || child !== client) return;
			const exit = Number(stdout.trim().split("\n").pop());
			if (code === 0 && stdout.trim() && Number.isInteger(exit)) return settle({ code: exit });
			if (engineFailure(engine, { code, stderr }).code === "no-container") return settle({ code: null });
			// Our client died, or the engine could not say: the container may well run on. Ask, then wait again.
			void check().then(() => {
				if (!settled && !cancelled) rewait = setTimeout(waitOnce, REWAIT_MS);
			});
		});
	}

	waitOnce();
	void check();
	watcher = setInterval(() => {
		if (!first || settled || grace || isAlive(first.pid, first.start)) return;
		// Its first process is gone: `engine wait` normally answers at once with the code; when it does not
		// (no monitor), the engine and the kernel are asked.
		grace = setTimeout(() => void check(), EXIT_CODE_GRACE_MS);
	}, WATCH_MS);

	return {
		done,
		cancel() {
			cancelled = true;
			stopTimers();
			child?.kill("SIGTERM");
		},
	};
}
