// A container target's engine work, as the link's container driver (driver-container.mjs) calls it:
// start one run's container, tell whether it runs, wait for it, stop it, snapshot its workspace from
// inside, reconcile containers no row owns, and check a target. Every engine call is the user's own
// docker or podman CLI (container-argv.mjs builds the argv). The target-side dirs live on this machine
// under <store>/targets/<name>/ (far-run.mjs layout): the runner inside writes them, the link reads
// them as untrusted.
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { ensureDir } from "../fs-util.mjs";
import { makePiHome } from "../pi-home.mjs";
import { recordFarEnd } from "./far-end.mjs";
import { farPaths, fileDigest, PACKAGE_ROOT, prepareRun, sameDigest } from "./far-run.mjs";
import { readFrames } from "./frames.mjs";
import { checkItems } from "./host-check.mjs";
import { sshEnv } from "./ssh-transport.mjs";
import { containerLabelsArgs, containerListArgs, containerName, containerRunArgs, containerSnapshotArgs, containerStopArgs, engineGlobalArgs, IN, orphanContainers } from "./container-argv.mjs";

/**
 * @typedef {import("./driver.mjs").LinkRun & { target: import("./driver.mjs").ContainerTargetConfig & { name: string } }} ContainerRun
 * @typedef {import("./driver.mjs").ContainerTargetConfig & { name: string }} ContainerTarget
 */

/**
 * Runs the engine CLI; resolves with its exit and output (never rejects: a missing CLI is code null).
 * @param {ContainerTarget} target @param {string[]} args @param {{ input?: string, env?: NodeJS.ProcessEnv }} [options]
 * @returns {Promise<{ code: number | null, stdout: string, stderr: string }>}
 */
export function runEngine(target, args, options = {}) {
	return new Promise((resolve) => {
		const child = spawn(target.engine, args, { stdio: ["pipe", "pipe", "pipe"], env: options.env ?? sshEnv() });
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (/** @type {string} */ c) => (stdout += c));
		child.stderr.setEncoding("utf8").on("data", (/** @type {string} */ c) => (stderr = (stderr + c).slice(-8000)));
		child.stdin.on("error", () => undefined);
		child.stdin.end(options.input ?? "");
		child.on("error", (error) => resolve({ code: null, stdout, stderr: /** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT" ? `${target.engine} not found on PATH` : error.message }));
		child.on("close", (code) => resolve({ code, stdout, stderr }));
	});
}

/** @param {string} stderr */
const lastLine = (stderr) => stderr.trim().split("\n").pop() ?? "";

/** A container run's dirs on this machine. @param {ContainerRun} run */
export function containerDirs(run) {
	const dir = join(run.storeDir, "targets", run.target.name);
	return { dir, ...farPaths(dir, run.rowId, run.runId), piHome: join(dir, "pi", run.runId) };
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
 * container detached. A run whose runner already started is not started again.
 * @param {ContainerRun} run
 * @returns {Promise<{ runDir: string, sessionFile: string, worktree: string }>}
 */
export async function startRun(run) {
	const dirs = containerDirs(run);
	const started = { runDir: dirs.run, sessionFile: dirs.session, worktree: dirs.work };
	if (existsSync(join(dirs.run, "runner.json")) || (await alive(run))) return started;
	if (run.target.engineHost) throw new Error(`--engine-host is not supported yet: the engine's machine would need this run's dirs (${dirs.dir})`);
	ensureDir(dirname(dirs.session));
	const session = sendSession(run.sessionFile, dirs.session);
	const prepared = prepareRun(dirs.dir, { ...run.config, session }, { container: { source: run.repo } });
	makePiHome({ agentDir: run.agentDir, dest: dirs.piHome, model: run.config.model });
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
		mounts: { pkg: PACKAGE_ROOT, run: prepared.runDir, session: dirname(prepared.sessionFile), piHome: dirs.piHome, workspace: prepared.worktree, objects: prepared.objects },
		uid: process.getuid?.() ?? 0,
		gid: process.getgid?.() ?? 0,
	});
	// --env values reach the engine's environment only; `-e NAME` takes them from there.
	const result = await runEngine(run.target, argv, { env: { ...sshEnv(), ...run.forwarded } });
	if (result.code !== 0) throw new Error(`${run.target.engine} run failed: ${lastLine(result.stderr) || `exit ${result.code}`}`);
	return started;
}

/** Whether the run's container is running. @param {ContainerRun} run */
export async function alive(run) {
	const result = await runEngine(run.target, [...engineGlobalArgs(run.target.engine, run.target.engineHost), "inspect", "--format", "{{.State.Running}}", containerName(run.runId)]);
	return result.code === 0 && result.stdout.trim() === "true";
}

/**
 * Resolves when the run's container is gone or has exited (`engine wait`; a missing container at once).
 * @param {ContainerRun} run
 * @returns {{ done: Promise<void>, cancel(): void }}
 */
export function wait(run) {
	const child = spawn(run.target.engine, [...engineGlobalArgs(run.target.engine, run.target.engineHost), "wait", containerName(run.runId)], { stdio: "ignore", env: sshEnv() });
	const done = new Promise((resolve) => {
		child.on("error", () => resolve(undefined));
		child.on("exit", () => resolve(undefined));
	});
	return { done: /** @type {Promise<void>} */ (done), cancel: () => child.kill("SIGTERM") };
}

/**
 * Ends the run's container with everything in it (engine stop, which SIGTERMs the runner through
 * --init, then rm -f) and records the end in the target-side run dir if the runner could not.
 * @param {ContainerRun} run @param {{ graceS?: number }} [options]
 */
export async function stop(run, options = {}) {
	const args = containerStopArgs(run.target.engine, run.target.engineHost, run.runId, options.graceS ?? 10);
	await runEngine(run.target, args.stop);
	await runEngine(run.target, args.remove);
	const runDir = containerDirs(run).run;
	return existsSync(join(runDir, "status.json")) ? { status: await recordFarEnd(runDir, "stopped", () => false) } : {};
}

/**
 * Snapshots the workspace's uncommitted work into refs/agent-board/wip/<rowId> from inside a container
 * (this side never runs git in a workspace a container had): `engine exec` into the run's container
 * while it runs, else a one-shot container with the workspace alone.
 * @param {ContainerRun} run
 * @returns {Promise<{ head: string, wip: string } | undefined>}
 */
export async function snapshot(run) {
	const dirs = containerDirs(run);
	if (!existsSync(dirs.work)) return undefined;
	const agent = [`${IN.runner}/targets/host-agent.mjs`, "snapshot", IN.workspace, run.rowId];
	const running = await alive(run);
	const objects = running ? undefined : workspaceObjects(dirs.work);
	const args = running
		? [...engineGlobalArgs(run.target.engine, run.target.engineHost), "exec", containerName(run.runId), "node", ...agent]
		: containerSnapshotArgs({ engine: run.target.engine, engineHost: run.target.engineHost, image: run.target.image, pkg: PACKAGE_ROOT, workspace: dirs.work, objects, uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, command: ["node", ...agent] });
	const result = await runEngine(run.target, args);
	/** @type {{ head: string, wip: string } | undefined} */
	let value;
	readFrames(streamOf(result.stdout), (frame) => {
		if (frame.t === "result" && typeof frame.value.head === "string" && typeof frame.value.wip === "string") value = { head: frame.value.head, wip: frame.value.wip };
	});
	if (!value) throw new Error(`snapshot of ${dirs.work} in a container failed: ${lastLine(result.stderr) || `exit ${result.code}`}`);
	return value;
}

/** The objects dir a shared clone borrows (its alternates file), to mount read-only. @param {string} worktree */
function workspaceObjects(worktree) {
	try {
		const line = readFileSync(join(worktree, ".git", "objects", "info", "alternates"), "utf8").split("\n")[0]?.trim();
		return line && line.startsWith("/") ? line : undefined;
	} catch {
		return undefined;
	}
}

/** A finished string as a stream readFrames can take (it only uses setEncoding/on). @param {string} text */
function streamOf(text) {
	/** @type {Record<string, (arg?: string) => void>} */
	const handlers = {};
	const stream = /** @type {NodeJS.ReadableStream} */ (/** @type {unknown} */ ({
		setEncoding: () => stream,
		on(/** @type {string} */ event, /** @type {(arg?: string) => void} */ fn) {
			handlers[event] = fn;
			if (event === "end") {
				handlers.data?.(text);
				fn();
			}
			return stream;
		},
	}));
	return stream;
}

/**
 * Removes this store's containers of `target` that no live run owns (its run ended, or its row is gone).
 * @param {string} storeDir @param {ContainerTarget} target @param {(rowId: string, runId: string) => boolean} runIsLive
 * @returns {Promise<string[]>} the names removed
 */
export async function reconcile(storeDir, target, runIsLive) {
	const listed = await runEngine(target, containerListArgs(target.engine, target.engineHost, storeDir));
	const names = listed.code === 0 ? listed.stdout.split("\n").map((n) => n.trim()).filter(Boolean) : [];
	if (names.length === 0) return [];
	const inspected = await runEngine(target, containerLabelsArgs(target.engine, target.engineHost, names));
	const labels = inspected.stdout.trim().split("\n");
	/** @type {{ name: string, labels: Record<string, string> }[]} */
	const found = names.map((name, i) => {
		try {
			return { name, labels: JSON.parse(labels[i] ?? "{}") ?? {} };
		} catch {
			return { name, labels: {} };
		}
	});
	const orphans = orphanContainers(found, runIsLive);
	for (const name of orphans) await runEngine(target, [...engineGlobalArgs(target.engine, target.engineHost), "rm", "-f", name]);
	return orphans;
}

/**
 * `targets check` for a container target: the engine CLI, the image, and node/pi/git inside it.
 * @param {ContainerTarget} target
 * @returns {Promise<import("./host-check.mjs").CheckItem[]>}
 */
export async function check(target) {
	/** @type {import("./host-check.mjs").CheckItem[]} */
	const items = [];
	const version = await runEngine(target, [...engineGlobalArgs(target.engine, target.engineHost), "version", "--format", "{{.Client.Version}}"]);
	items.push(version.code === 0 ? { name: "engine", ok: true, detail: `${target.engine} ${version.stdout.trim()}` } : { name: "engine", ok: false, detail: lastLine(version.stderr) || `${target.engine} failed`, fix: `install ${target.engine}, or start its daemon` });
	if (target.engineHost) items.push({ name: "engine host", ok: false, detail: "--engine-host is not supported yet (the engine's machine would need the run's dirs)", fix: "use an engine on this machine" });
	if (version.code !== 0) return items;
	const image = await runEngine(target, [...engineGlobalArgs(target.engine, target.engineHost), "image", "inspect", "--format", "{{.Id}}", target.image]);
	if (image.code !== 0) {
		items.push({ name: "image", ok: false, detail: `${target.image} not found (${lastLine(image.stderr)})`, fix: `build it: ${target.engine} build -t ${target.image} - < docker/worker.Dockerfile` });
		return items;
	}
	items.push({ name: "image", ok: true, detail: target.image });
	const source = readFileSync(join(PACKAGE_ROOT, "runner", "targets", "host-check.mjs"), "utf8");
	const program = `${source}\nprocess.stdout.write(JSON.stringify(checkHost("/tmp/ab-check", { minFreeBytes: 0 })));\n`;
	const probe = await runEngine(target, [...engineGlobalArgs(target.engine, target.engineHost), "run", "--rm", "-i", "--network", "none", "--tmpfs", "/tmp", target.image, "node", "--input-type=module", "-"], { input: program });
	try {
		const report = JSON.parse(probe.stdout);
		items.push(...checkItems(report, { where: `the image ${target.image}` }).filter((item) => ["node", "pi", "git"].includes(item.name)));
	} catch {
		items.push({ name: "node", ok: false, detail: `cannot run node in ${target.image}: ${lastLine(probe.stderr) || `exit ${probe.code}`}`, fix: "use an image with node >= 22.19, pi 1.6, bash and git (docker/worker.Dockerfile)" });
	}
	return items;
}
