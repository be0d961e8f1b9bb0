// A run at a target, on the target's side (host-agent.mjs prepare/start): a board store in the same
// layout as the local one under <dir>/store, so the unchanged job-runner.mjs runs against it. The link
// sends the run's config (prompt and --env values included) and the session over stdin, never argv.
import { createHash } from "node:crypto";
import { createWriteStream, existsSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureDir, FILE_MODE, writeJsonAtomic } from "../store/fs-util.mjs";
import { isAlive, RUN_TAG } from "../store/proc.mjs";
import { spawnRunner } from "../life/spawn-runner.mjs";
import { initialStatus } from "../life/state-rules.mjs";
import { runPathsOf } from "../store/store-layout.mjs";
import { IN } from "../kinds/container/container-argv.mjs";
import { ensureClone, ensureMirror, syncWorktree } from "./git-workspace.mjs";
import { readInside } from "./safe-read.mjs";

/** This package's root at the target (<dir>/pkg/<version>/ over ssh). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/;

/**
 * @typedef {object} FarRunConfig  what the link sends in the prepare "config" frame
 * @property {string} rowId
 * @property {string} runId
 * @property {string} repoKey
 * @property {string} base          commit the link pushed to refs/agent-board/base/<rowId>
 * @property {string} [subdir]      the run's cwd inside the workspace ("" or absent: its top)
 * @property {string} prompt
 * @property {string} [model]
 * @property {string} [thinking]
 * @property {Record<string, string>} env  --env values
 * @property {string[]} [piCommand]
 * @property {string} [summaryModel]
 * @property {number} [summaryTimeoutMs]
 * @property {number} [stopGraceMs]
 * @property {number} createdAt
 * @property {{ size: number, sha256: string } | null} session  the local session file, if any
 */

/** @param {Record<string, unknown>} value @returns {FarRunConfig} */
export function checkFarConfig(value) {
	const v = value;
	/** @param {string} what */
	const bad = (what) => new Error(`bad run config: ${what}`);
	if (typeof v.rowId !== "string" || !ID.test(v.rowId)) throw bad("rowId");
	if (typeof v.runId !== "string" || !ID.test(v.runId)) throw bad("runId");
	if (typeof v.repoKey !== "string" || !KEY.test(v.repoKey)) throw bad("repoKey");
	if (typeof v.base !== "string" || !/^[0-9a-f]{40,64}$/.test(v.base)) throw bad("base");
	if (typeof v.prompt !== "string") throw bad("prompt");
	if (v.subdir !== undefined && (typeof v.subdir !== "string" || v.subdir.startsWith("/") || v.subdir.split("/").includes(".."))) throw bad("subdir");
	if (!v.env || typeof v.env !== "object" || Object.values(v.env).some((x) => typeof x !== "string")) throw bad("env");
	if (v.piCommand !== undefined && (!Array.isArray(v.piCommand) || v.piCommand.length === 0 || v.piCommand.some((x) => typeof x !== "string"))) throw bad("piCommand");
	if (typeof v.createdAt !== "number") throw bad("createdAt");
	const s = /** @type {Record<string, unknown> | null | undefined} */ (v.session);
	if (s != null && (typeof s.size !== "number" || typeof s.sha256 !== "string")) throw bad("session");
	return /** @type {FarRunConfig} */ (/** @type {unknown} */ (v));
}

/**
 * A target's dirs. Each row's session has a directory of its own, so a container gets its row's
 * session and nothing of the others.
 * @param {string} dir @param {string} rowId @param {string} [runId]
 */
export function farPaths(dir, rowId, runId = "") {
	const store = join(dir, "store");
	return {
		store,
		row: join(store, "rows", rowId),
		run: join(store, "rows", rowId, "runs", runId),
		session: runPathsOf("target", store, rowId, runId).sessionFile,
		work: join(dir, "work", rowId),
	};
}

/** @param {string} dir @param {string} repoKey */
export const mirrorPath = (dir, repoKey) => join(dir, "repos", `${repoKey}.git`);

/** @param {string} path @returns {{ size: number, sha256: string } | null} */
export function fileDigest(path) {
	if (!existsSync(path)) return null;
	const bytes = readFileSync(path);
	return { size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
}

/** @param {{ size: number, sha256: string } | null} a @param {{ size: number, sha256: string } | null} b */
export function sameDigest(a, b) {
	return a === b || (!!a && !!b && a.size === b.size && a.sha256 === b.sha256);
}

/**
 * Receives session bytes (base64 chunks in order) into a temp file and renames it over the row's
 * session once size and hash match what the config announced; a partial transfer changes nothing.
 * @param {string} path @param {{ size: number, sha256: string }} expected
 */
export function sessionReceiver(path, expected) {
	ensureDir(dirname(path));
	const temp = `${path}.incoming-${process.pid}`;
	rmSync(temp, { force: true });
	// "wx": nothing planted at the temp name is written through.
	const out = createWriteStream(temp, { mode: FILE_MODE, flags: "wx" });
	const hash = createHash("sha256");
	let size = 0;
	return {
		/** @param {number} offset @param {string} data */
		chunk(offset, data) {
			if (offset !== size) throw new Error(`session chunk at ${offset}, expected ${size}`);
			const bytes = Buffer.from(data, "base64");
			hash.update(bytes);
			size += bytes.length;
			out.write(bytes);
		},
		/** @returns {Promise<number>} */
		finish() {
			return new Promise((resolvePromise, reject) => {
				out.end(() => {
					const sha256 = hash.digest("hex");
					if (size !== expected.size || sha256 !== expected.sha256) return reject(new Error(`session transfer incomplete: ${size} of ${expected.size} bytes`));
					renameSync(temp, path);
					resolvePromise(size);
				});
			});
		},
	};
}

/**
 * Everything before the runner starts: dirs (0700), the workspace at the pushed base, run.json (0600,
 * holds the prompt and --env values) and a queued status. A session the link did not send is moved
 * aside, never overwritten (a new row must not resume a stranger's session).
 * ssh: the workspace is a worktree of the bare mirror; run.json holds this machine's paths.
 * container (`options.container`): the workspace is a shared clone of `source`, and run.json holds the
 * paths the runner sees inside (container-argv.mjs IN); the link runs this on its own machine.
 * @param {string} dir @param {FarRunConfig} config @param {{ container?: { source: string } }} [options]
 */
export function prepareRun(dir, config, options = {}) {
	const paths = farPaths(dir, config.rowId, config.runId);
	const tmp = join(dir, "tmp");
	if (existsSync(join(paths.run, "runner.json"))) throw new Error(`run ${config.runId} already started at ${paths.run}`);
	for (const path of [paths.run, dirname(paths.session), join(paths.store, "notify"), tmp]) ensureDir(path);
	if (config.session === null && existsSync(paths.session)) renameSync(paths.session, `${paths.session}.aside-${Date.now()}`);
	/** @type {{ head: string, action: string, objects?: string }} */
	let workspace;
	if (options.container) workspace = ensureClone({ source: options.container.source, worktree: paths.work, rowId: config.rowId, base: config.base });
	else {
		const mirror = mirrorPath(dir, config.repoKey);
		ensureMirror(mirror);
		workspace = syncWorktree({ mirror, worktree: paths.work, rowId: config.rowId, base: config.base });
	}
	const inside = options.container
		? { layout: "container", runDir: IN.run, storeDir: "/tmp/ab-store", sessionFile: `${IN.session}/${config.rowId}.jsonl`, cwd: join(IN.workspace, config.subdir ?? ""), extensionPath: `${IN.src}/index.ts`, tmp: IN.home }
		: { layout: "target", runDir: paths.run, storeDir: paths.store, sessionFile: paths.session, cwd: join(paths.work, config.subdir ?? ""), extensionPath: join(PACKAGE_ROOT, "src", "index.ts"), tmp };
	writeJsonAtomic(join(paths.run, "run.json"), {
		rowId: config.rowId,
		runId: config.runId,
		layout: inside.layout,
		runDir: inside.runDir,
		storeDir: inside.storeDir,
		maxConcurrent: 1,
		sessionFile: inside.sessionFile,
		cwd: inside.cwd,
		prompt: config.prompt,
		piCommand: config.piCommand ?? ["pi"],
		model: config.model,
		thinking: config.thinking,
		extensionPath: inside.extensionPath,
		// Every run here is a board worker. A private TMPDIR: a shared host's /tmp/jiti belongs to whoever
		// ran pi first, and without a writable cache pi compiles our extension on every start.
		env: { AGENT_BOARD_WORKER: "1", AGENT_BOARD_ROW: config.rowId, TMPDIR: inside.tmp, ...config.env },
		summaryModel: config.summaryModel,
		summaryTimeoutMs: config.summaryTimeoutMs,
		stopGraceMs: config.stopGraceMs,
		createdAt: config.createdAt,
	});
	if (!existsSync(join(paths.run, "status.json"))) writeJsonAtomic(join(paths.run, "status.json"), initialStatus(config.runId, config.rowId, config.createdAt));
	return { runDir: paths.run, worktree: paths.work, sessionFile: paths.session, head: workspace.head, action: workspace.action, objects: workspace.objects, session: fileDigest(paths.session) };
}

/** @param {string} path @returns {{ pid: number, start: string } | undefined} */
export function readProcessFile(path) {
	try {
		const value = JSON.parse(String(readInside(dirname(path), path) ?? ""));
		if (typeof value?.pid === "number" && typeof value?.start === "string") return value;
	} catch {
		// Missing or torn: no process recorded.
	}
	return undefined;
}

/**
 * Starts the run's runner detached (it outlives this ssh session); the runner records itself, and
 * follow reads that (nothing waits for it on the way to the first model request). A run whose runner
 * runs is left to it; a run whose runner already ran is refused.
 * @param {string} runDir
 */
export function startRun(runDir) {
	const runnerFile = join(runDir, "runner.json");
	const existing = readProcessFile(runnerFile);
	if (existing && isAlive(existing.pid, existing.start)) return;
	if (existsSync(runnerFile)) throw new Error(`run at ${runDir} already ran (its runner is gone)`);
	const config = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8"));
	spawnRunner(runDir, join(runDir, "slot.json"), process.execPath, { ...process.env, [RUN_TAG]: String(config.runId) });
}

/** @param {string} runDir @returns {Record<string, unknown> | undefined} */
export function safeStatus(runDir) {
	try {
		const value = JSON.parse(String(readInside(runDir, join(runDir, "status.json")) ?? ""));
		return value && typeof value === "object" ? value : undefined;
	} catch {
		return undefined;
	}
}
