// A run at a target, on the target's side (host-agent.mjs prepare/start): a board store in the same
// layout as the local one under <dir>/store, so the unchanged job-runner.mjs runs against it. The link
// sends the run's config (prompt and --env values included) and the session over stdin, never argv.
import { existsSync, readFileSync, renameSync, statfsSync } from "node:fs";
import { dirname, join } from "node:path";
import { MIN_FREE_BYTES } from "./host-check.mjs";
import { buildRunConfig, portableRun } from "../life/run-config.mjs";
import { spawnRunner } from "../life/spawn-runner.mjs";
import { initialStatus } from "../life/state-rules.mjs";
import { ensureDir, writeJsonAtomic } from "../store/fs-util.mjs";
import { isAlive, RUN_TAG, runTag } from "../store/proc.mjs";
import { targetMirrorPath, targetPaths } from "../store/store-layout.mjs";
import { ensureClone, ensureMirror, syncWorktree } from "./git-workspace.mjs";
import { PACKAGE_ROOT } from "./package-files.mjs";
import { createExclusive } from "../store/owner-file.mjs";
import { readProcessFile } from "../store/safe-read.mjs";
import { fileDigest, sizeWords } from "./session-travel.mjs";

const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/;

/**
 * What the link sends in the "config" frame: the run (the part of run.json that travels, its env with
 * the --env values) and how its code and session get there.
 * @typedef {import("../life/run-config.mjs").PortableRun & FarParts} FarRunConfig
 * @typedef {object} FarParts
 * @property {string} repoKey
 * @property {string} base          commit the link pushed to refs/agent-board/base/<rowId>
 * @property {string} [subdir]      the run's cwd inside the workspace ("" or absent: its top)
 * @property {string[]} [piCommand] the pi command there (default: pi)
 * @property {{ size: number, sha256: string } | null} session  the local session file, if any
 */

/**
 * Where a far run's files are as its runner sees them: the target's layout by default; a container's
 * mount points when it runs in one (its kind says which: container-transport.mjs).
 * @typedef {{ layout: import("../store/store-layout.mjs").RunLayout, runDir: string, storeDir: string, sessionFile: string, cwd: string, extensionPath: string, tmp: string }} FarPlace
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
	if (
		v.subdir !== undefined &&
		(typeof v.subdir !== "string" || v.subdir.startsWith("/") || v.subdir.split("/").includes(".."))
	)
		throw bad("subdir");
	if (!v.env || typeof v.env !== "object" || Object.values(v.env).some((x) => typeof x !== "string")) throw bad("env");
	if (
		v.piCommand !== undefined &&
		(!Array.isArray(v.piCommand) || v.piCommand.length === 0 || v.piCommand.some((x) => typeof x !== "string"))
	)
		throw bad("piCommand");
	if (typeof v.createdAt !== "number") throw bad("createdAt");
	const s = /** @type {Record<string, unknown> | null | undefined} */ (v.session);
	if (s != null && (typeof s.size !== "number" || typeof s.sha256 !== "string")) throw bad("session");
	return /** @type {FarRunConfig} */ (/** @type {unknown} */ (v));
}

/**
 * Why a new run may not start in `dir` for want of space (targets check's rule: MIN_FREE_BYTES free where
 * the dir is, or where it would be made), or undefined.
 * @param {string} dir absolute
 */
export function spaceProblem(dir) {
	let at = dir;
	while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
	let free;
	try {
		const stat = statfsSync(at);
		free = Number(stat.bavail) * Number(stat.bsize);
	} catch {
		return undefined;
	}
	if (free >= MIN_FREE_BYTES) return undefined;
	return `only ${sizeWords(free)} free in ${dir}; a run there needs ${sizeWords(MIN_FREE_BYTES)} (free some space, or choose another --dir)`;
}

/**
 * Everything before the runner starts: dirs (0700), the workspace at the pushed base, run.json (0600,
 * holds the prompt and --env values) and a queued status. A session the link did not send is moved
 * aside, never overwritten (a new row must not resume a stranger's session).
 * The workspace is a worktree of the target's bare mirror, or (`clone`) a shared clone of `source`;
 * run.json holds the target's paths, or those `inside` gives (a container's, whose link runs this on
 * its own machine).
 * @param {string} dir @param {FarRunConfig} config
 * @param {{ clone?: { source: string }, inside?: (paths: ReturnType<typeof targetPaths>) => FarPlace }} [options]
 */
export function prepareRun(dir, config, options = {}) {
	const paths = targetPaths(dir, config.rowId, config.runId);
	const tmp = join(dir, "tmp");
	if (farRunStarted(paths.run)) throw new Error(`run ${config.runId} already started at ${paths.run}`);
	for (const path of [paths.run, dirname(paths.session), join(paths.store, "notify"), tmp]) ensureDir(path);
	if (config.session === null && existsSync(paths.session))
		renameSync(paths.session, `${paths.session}.aside-${Date.now()}`);
	/** @type {{ head: string, action: string, objects?: string }} */
	let workspace;
	if (options.clone)
		workspace = ensureClone({
			source: options.clone.source,
			worktree: paths.work,
			rowId: config.rowId,
			base: config.base,
		});
	else {
		const mirror = targetMirrorPath(dir, config.repoKey);
		ensureMirror(mirror);
		workspace = syncWorktree({ mirror, worktree: paths.work, rowId: config.rowId, base: config.base });
	}
	/** @type {FarPlace} */
	const place = options.inside?.(paths) ?? {
		layout: "target",
		runDir: paths.run,
		storeDir: paths.store,
		sessionFile: paths.session,
		cwd: join(paths.work, config.subdir ?? ""),
		extensionPath: join(PACKAGE_ROOT, "src", "index.ts"),
		tmp,
	};
	const { tmp: tmpDir, ...where } = place;
	// A private TMPDIR: a shared host's /tmp/jiti belongs to whoever ran pi first, and without a
	// writable cache pi compiles our extension on every start.
	writeJsonAtomic(
		join(paths.run, "run.json"),
		buildRunConfig(portableRun(config), {
			...where,
			piCommand: config.piCommand ?? ["pi"],
			maxConcurrent: 1,
			env: { TMPDIR: tmpDir },
		}),
	);
	if (!existsSync(join(paths.run, "status.json")))
		writeJsonAtomic(join(paths.run, "status.json"), initialStatus(config.runId, config.rowId, config.createdAt));
	return {
		runDir: paths.run,
		worktree: paths.work,
		sessionFile: paths.session,
		head: workspace.head,
		action: workspace.action,
		objects: workspace.objects,
		session: fileDigest(paths.session),
	};
}

/**
 * Whether the run's runner was started: it recorded itself (runner.json), or a launch claimed its start
 * (start.json, made with O_EXCL just before the spawn; the runner records itself a moment later).
 * @param {string} runDir
 */
export const farRunStarted = (runDir) =>
	existsSync(join(runDir, "runner.json")) || existsSync(join(runDir, "start.json"));

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
	// One start: two launches of the run can meet here (a relink's while the first one's runner is still
	// starting, before it records itself); the one that does not create start.json leaves it to the other.
	if (!createExclusive(join(runDir, "start.json"), JSON.stringify({ pid: process.pid, at: Date.now() }))) return;
	// The far side's own tag: an end here never reaches a link on this machine (ssh to oneself).
	spawnRunner(runDir, join(runDir, "slot.json"), process.execPath, {
		...process.env,
		[RUN_TAG]: runTag(String(config.runId), "target"),
	});
}
