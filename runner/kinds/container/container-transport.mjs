// A container target's engine work, as the link's container driver (driver-container.mjs) calls it:
// start one run's container, wait for it, stop it, reconcile containers no row owns, and check a
// target (whether it runs: container-run.mjs; its workspace: container-workspace.mjs). Every engine
// call is the user's own docker or podman CLI (container-engine.mjs runs it, container-argv.mjs builds
// the argv); a failure is an EngineError whose code says what and whose message says how to fix it.
// The target-side dirs live on this machine under <store>/targets/<name>/ (a target's layout): the
// runner inside writes them, the link reads them as untrusted.
import { copyFileSync, existsSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { ensureDir } from "../../store/fs-util.mjs";
import { diedEnd, endOrphan, stoppedEnd } from "../../life/run-end.mjs";
import { dropMessage } from "../../life/inbox.mjs";
import { makePiHome } from "./pi-home.mjs";
import {
	containerLabelsArgs,
	containerListArgs,
	containerRunArgs,
	containerStopArgs,
	engineGlobalArgs,
	orphanContainers,
} from "./container-argv.mjs";
import { cacheRoot, ensureStartCache, readyCache } from "./container-cache.mjs";
import { checkContainerTarget, ENGINE_HOST_REFUSED } from "./container-check.mjs";
import { EngineError, engineEnv, engineRun } from "./container-engine.mjs";
import { prepareRun } from "../../far/far-run.mjs";
import { PACKAGE_ROOT, packageVersion } from "../../far/package-files.mjs";
import { safeStatus } from "../../store/safe-read.mjs";
import { fileDigest, sameDigest } from "../../far/session-travel.mjs";
import { alive, containerDirs, containerPlace } from "./container-run.mjs";
import { waitContainer } from "./container-wait.mjs";
import { gitOneShot } from "./container-workspace.mjs";

/**
 * @typedef {import("./container-argv.mjs").ContainerTarget} ContainerTarget
 * @typedef {import("./container-run.mjs").ContainerRun} ContainerRun
 */

const ids = () => ({ uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 });

/** This package's version: hashing its files costs ~50 ms, and a link starts one run. */
let pkgVersion = "";

/** What the start cache is keyed and labelled by. @param {ContainerRun} run */
function cacheTarget(run) {
	const { engine, engineHost, image } = run.target;
	pkgVersion ||= packageVersion();
	return {
		engine,
		engineHost,
		image,
		cacheRoot: cacheRoot(run.storeDir),
		storeDir: run.storeDir,
		pkg: PACKAGE_ROOT,
		pkgVersion,
		...ids(),
	};
}

/**
 * The row's session goes to the target's session dir when that copy differs (a copy, then a rename:
 * a partial copy changes nothing).
 * @param {string} from @param {string} to
 */
function sendSession(from, to) {
	const local = fileDigest(from);
	if (!local || sameDigest(local, fileDigest(to))) return local;
	const temp = `${to}.incoming-${process.pid}`;
	copyFileSync(from, temp);
	renameSync(temp, to);
	return local;
}

/**
 * Prepares the run's dirs (workspace = shared clone, run.json, session, pi home) and starts its
 * container detached. A run whose runner already started is not started again. The start cache is
 * mounted when it is ready; it is (re)checked and prepared in the background after the start, for the
 * next run (`warm: "wait"` prepares it first; "off" runs cold).
 * @param {ContainerRun} run @param {{ warm?: "use" | "wait" | "off" }} [options]
 * @returns {Promise<{ runDir: string, sessionFile: string, worktree: string, cache?: string, warming?: Promise<unknown> }>}
 */
export async function startRun(run, options = {}) {
	const dirs = containerDirs(run);
	const started = { runDir: dirs.run, sessionFile: dirs.session, worktree: dirs.work };
	if (run.target.engineHost)
		throw new EngineError("engine-failed", ENGINE_HOST_REFUSED, {
			fix: "its runs go through the kind's remote driver (driver-remote-engine.mjs)",
		});
	// Started before (a new link on the same run): runner.json, or the name taken below.
	if (existsSync(join(dirs.run, "runner.json"))) return started;
	ensureDir(dirname(dirs.session));
	const session = sendSession(run.sessionFile, dirs.session);
	const prepared = prepareRun(
		dirs.dir,
		{ ...run.config, session },
		// The run's cwd inside the workspace is the link's (a subdirectory of the worktree); run.config has none.
		{ clone: { source: run.repo }, inside: () => containerPlace(run.rowId, run.subdir || run.config.subdir) },
	);
	// A follow-up run: the workspace is the agent's, so moving it to the local branch (a merge may have
	// committed there) runs inside; refused when it has work the base lacks.
	if (prepared.action === "existing")
		await gitOneShot(run, ["sync", run.rowId, run.config.base]).catch((error) => {
			throw new EngineError(
				error instanceof EngineError ? error.code : "engine-failed",
				`the workspace ${dirs.work} cannot start from ${run.config.base.slice(0, 12)}: ${error instanceof Error ? error.message : String(error)}`,
			);
		});
	makePiHome({ agentDir: run.agentDir, dest: dirs.piHome, model: run.config.model });
	const warm = options.warm ?? "use";
	const cache =
		warm === "wait"
			? (await ensureStartCache(cacheTarget(run))).dir
			: warm === "use"
				? readyCache(cacheTarget(run))?.dir
				: undefined;
	const argv = containerRunArgs({
		engine: run.target.engine,
		engineHost: run.target.engineHost,
		image: run.target.image,
		network: run.target.network,
		cpus: run.target.cpus,
		memory: run.target.memory,
		env: Object.keys(run.forwarded),
		storeDir: run.storeDir,
		rowId: run.rowId,
		runId: run.runId,
		mounts: {
			pkg: PACKAGE_ROOT,
			run: prepared.runDir,
			session: dirname(prepared.sessionFile),
			piHome: dirs.piHome,
			workspace: prepared.worktree,
			objects: prepared.objects,
			cache,
		},
		...ids(),
	});
	// --env values reach the engine's environment only; `-e NAME` takes them from there.
	try {
		await engineRun(run.target.engine, argv, { image: run.target.image, env: { ...engineEnv(), ...run.forwarded } });
	} catch (error) {
		// Its container exists already (a link that died right after starting it): that run goes on.
		if (!(error instanceof EngineError && /already in use|is already in use by|Conflict/i.test(error.message)))
			throw error;
	}
	const warming =
		warm === "use" ? ensureStartCache(cacheTarget(run)).catch((/** @type {unknown} */ error) => error) : undefined;
	return { ...started, cache, ...(warming ? { warming } : {}) };
}

/**
 * Resolves when the run's container has exited or is gone (container-wait.mjs: never on our wait
 * client's death, nor later than its first process's), after recording the end at the target when its
 * runner could not (recordEnd: killed from outside or out of memory, under the target store's row lock,
 * signalling nothing). A cancelled wait records nothing and never resolves.
 * @param {ContainerRun} run
 * @returns {{ done: Promise<import("./container-wait.mjs").ContainerExit>, cancel(): void }}
 */
export function wait(run) {
	const waiter = waitContainer(run);
	return {
		done: waiter.done.then(async (exit) => {
			if (!exit.error) await recordEnd(run, exit).catch(() => undefined);
			return exit;
		}),
		cancel: waiter.cancel,
	};
}

/**
 * Records the end of a run whose container is gone without its runner having recorded it: with what the
 * container's exit says (or "stopped"), through endOrphan (once, under the target store's row lock).
 * Nothing is signalled here: a container run has no process on this side (its processes carry the far
 * side's tag, and the link that calls this the run's).
 * @param {ContainerRun} run @param {import("./container-wait.mjs").ContainerExit | { stopped: true }} how
 */
export function recordEnd(run, how) {
	const runDir = containerDirs(run).run;
	if ("stopped" in how) return endOrphan(runDir, stoppedEnd(), { alive: () => alive(run) });
	// The wait settled on an exit (the engine's or the kernel's word): nothing runs it any more.
	return endOrphan(runDir, exitEnd(runDir, how, run.target), { alive: () => false });
}

/**
 * How a run ends whose container exited before its runner recorded an end: the words (endReason) and
 * the code (out of memory when the engine says so; killed from outside for SIGKILL and SIGTERM).
 * @param {string} runDir @param {import("./container-wait.mjs").ContainerExit} exit @param {ContainerTarget} target
 * @returns {import("../../life/state-rules.mjs").RunEnd}
 */
export function exitEnd(runDir, exit, target) {
	if (exit.oomKilled)
		return diedEnd(runDir, `its container ran out of memory (limit ${target.memory ?? "none set"})`, "out-of-memory");
	if (exit.lost)
		return diedEnd(runDir, "its container ended and its engine lost track of it (its monitor, conmon, is gone)");
	return diedEnd(
		runDir,
		endReason(exit.code, target),
		exit.code === 137 || exit.code === 143 ? "killed-outside" : "runner-died",
	);
}
/**
 * What a container's end says, for a run that ended without its runner recording it.
 * @param {number | null} code from wait() @param {ContainerTarget} target
 */
export function endReason(code, target) {
	if (code === 137)
		return `its container was killed (exit 137: killed from outside, or out of memory${target.memory ? ` with --memory ${target.memory}` : ""})`;
	if (code === 143) return "its container was killed from outside (exit 143: stopped by its engine, not by the board)";
	if (code === null) return "its container is gone (removed from outside, or the engine restarted)";
	return `its container exited with code ${code} before the runner recorded an end`;
}

/**
 * Ends the run's container with everything in it (engine stop, which SIGTERMs the runner through
 * --init, then rm -f), records the end in the target-side run dir if the runner could not, and removes
 * the run's pi home (it holds a provider's credentials).
 * @param {ContainerRun} run @param {{ graceS?: number }} [options]
 */
export async function stop(run, options = {}) {
	const { engine, engineHost } = run.target;
	const args = containerStopArgs(engine, engineHost, run.runId, options.graceS ?? 10);
	// The board's stop is a stop message first: the runner reads the SIGTERM that follows as ours, not
	// as a kill from outside.
	const runDir = containerDirs(run).run;
	const status = safeStatus(runDir);
	if (status && typeof status.endedAt !== "number") {
		try {
			dropMessage(runDir, { kind: "stop" });
		} catch {
			// A run dir we cannot write: the engine's stop still ends it (read as from outside).
		}
	}
	await engineRun(engine, args.stop, { okIfGone: true, timeoutMs: ((options.graceS ?? 10) + 30) * 1000 }).catch(
		() => undefined,
	);
	await engineRun(engine, args.remove, { okIfGone: true, timeoutMs: 60_000 });
	rmSync(containerDirs(run).piHome, { recursive: true, force: true });
	return existsSync(join(runDir, "status.json")) ? { status: await recordEnd(run, { stopped: true }) } : {};
}

/** After the run's end: its pi home holds a provider's credentials. @param {ContainerRun} run */
export function cleanup(run) {
	rmSync(containerDirs(run).piHome, { recursive: true, force: true });
}

/**
 * Removes this store's containers of `target` that no run owns any more: `runIsLive(rowId, runId)`
 * answers false when the run ended, its row is gone, or its link is dead and the run cannot be resumed
 * (a run a new link will resume counts as live). A container being started counts as live to the
 * caller (its run is not terminal). Engine failures leave everything in place and are returned.
 * @param {string} storeDir @param {ContainerTarget} target
 * @param {(rowId: string, runId: string) => boolean | Promise<boolean>} runIsLive
 * @returns {Promise<{ removed: string[], error?: EngineError }>}
 */
export async function reconcile(storeDir, target, runIsLive) {
	const { engine, engineHost } = target;
	try {
		const names = (
			await engineRun(engine, containerListArgs(engine, engineHost, storeDir), { timeoutMs: 30_000 })
		).stdout
			.split("\n")
			.map((n) => n.trim())
			.filter(Boolean);
		if (names.length === 0) return { removed: [] };
		const inspected = await engineRun(engine, containerLabelsArgs(engine, engineHost, names), {
			timeoutMs: 30_000,
			okIfGone: true,
		});
		const labels = inspected.stdout.trim().split("\n");
		/** @type {{ name: string, labels: Record<string, string> }[]} */
		const found = names.map((name, i) => {
			try {
				return { name, labels: JSON.parse(labels[i] ?? "{}") ?? {} };
			} catch {
				return { name, labels: {} };
			}
		});
		/** @type {Set<string>} */
		const live = new Set();
		for (const { labels: l } of found) {
			const row = l["agent-board.row"];
			const runId = l["agent-board.run"];
			if (row && runId && (await runIsLive(row, runId))) live.add(runId);
		}
		const orphans = orphanContainers(found, (_row, runId) => live.has(runId));
		for (const name of orphans)
			await engineRun(engine, [...engineGlobalArgs(engine, engineHost), "rm", "-f", name], {
				okIfGone: true,
				timeoutMs: 60_000,
			});
		return { removed: orphans };
	} catch (error) {
		if (error instanceof EngineError) return { removed: [], error };
		throw error;
	}
}

/**
 * `targets check` for a container target: engine (and its daemon), image, node/pi/bash/git inside it,
 * the model provider from the target's network, --engine-host refused; prepares the start cache.
 * @param {ContainerTarget} target
 * @param {Parameters<typeof checkContainerTarget>[1]} [options]
 * @returns {Promise<import("../../far/host-check.mjs").CheckItem[]>}
 */
export async function check(target, options = {}) {
	return (await checkContainerTarget(target, options)).items;
}
