// A container run's workspace, from this side: the wip snapshot taken inside a container (exec into
// the run's own container, the entry's final snapshot, or a one-shot container), a follow-up run's
// sync done inside, and the fetch-back by upload-pack. Git porcelain never runs here in a workspace a
// container had: its .git/config, attributes and hooks are the agent's.
import { existsSync, lstatSync } from "node:fs";
import { join, resolve } from "node:path";
import { containerOneShotArgs, containerSnapshotExecArgs, FINAL_SNAPSHOT, GIT_INSIDE, IN } from "./container-argv.mjs";
import { EngineError, engineRun } from "./container-engine.mjs";
import { alive, containerDirs } from "./container-run.mjs";
import { PACKAGE_ROOT } from "../../far/package-files.mjs";
import { fetchBack, repoKey } from "../../link/git-travel.mjs";
import { landingPath } from "../../link/landing.mjs";
import { git } from "../../far/git-workspace.mjs";
import { readInside } from "../../store/safe-read.mjs";

/** @typedef {import("./container-run.mjs").ContainerRun} ContainerRun */

const ids = () => ({ uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 });

/**
 * Snapshots the workspace's uncommitted work into refs/agent-board/wip/<rowId> inside a container
 * (git porcelain there runs the agent's .git config, hooks and filters: never on this side): `engine
 * exec` into the run's container while it runs, else a one-shot container with the same hardening,
 * no network, and only the workspace and its borrowed objects mounted.
 * @param {ContainerRun} run
 * @returns {Promise<{ head: string, wip: string, tree: string } | undefined>} undefined: no workspace
 */
export async function snapshot(run) {
	const { engine, engineHost } = run.target;
	const dirs = containerDirs(run);
	if (!existsSync(dirs.work)) return undefined;
	/** @type {string | undefined} */
	let out;
	if (await alive(run).catch(() => false)) {
		try {
			out = (
				await engineRun(engine, containerSnapshotExecArgs(engine, engineHost, run.runId, run.rowId), {
					timeoutMs: 120_000,
				})
			).stdout;
		} catch {
			// It ended while we asked, or the engine only thinks it runs (its monitor died: "cannot exec in a
			// stopped container"): what it left, or the one-shot below, which needs only the workspace.
		}
	}
	// The entry's snapshot as the runner exited (untrusted like everything in the run dir: it only
	// names commits, and what the workspace holds is the agent's anyway).
	out ??= readInside(dirs.run, join(dirs.run, FINAL_SNAPSHOT))?.toString("utf8");
	if (out === undefined) {
		try {
			out = await gitOneShot(run, ["snapshot", run.rowId]);
		} catch (error) {
			throw snapshotError(dirs.work, error);
		}
	}
	/** @type {{ head?: unknown, wip?: unknown, tree?: unknown } | undefined} */
	let value;
	try {
		value = JSON.parse(out.trim().split("\n").pop() ?? "");
	} catch {
		value = undefined;
	}
	const sha = (/** @type {unknown} */ v) => typeof v === "string" && /^[0-9a-f]{40,64}$/.test(v);
	if (!value || !sha(value.head) || !sha(value.wip) || !sha(value.tree))
		throw new Error(`snapshot of ${dirs.work}: unexpected answer ${JSON.stringify(out.slice(0, 120))}`);
	return { head: String(value.head), wip: String(value.wip), tree: String(value.tree) };
}

/**
 * The user's objects dir a run's workspace borrows, from the user's own repository. Not from the
 * workspace's alternates file: the agent can rewrite that, and its hooks run in the snapshot's
 * container, so what it names would be mounted for them to read (~/.ssh, say).
 * @param {ContainerRun} run
 */
function userObjects(run) {
	return resolve(run.repo, git(run.repo, ["rev-parse", "--git-common-dir"]), "objects");
}

/**
 * container-git.mjs in a one-shot container with the run's hardening, no network, and only the
 * workspace and the objects it borrows mounted. Resolves with its stdout.
 * @param {ContainerRun} run @param {string[]} args
 */
export async function gitOneShot(run, args) {
	const { engine, engineHost, image } = run.target;
	const objects = userObjects(run);
	const volumes = /** @type {[string, string, boolean?][]} */ ([
		[containerDirs(run).work, IN.workspace],
		[objects, objects, true],
	]);
	const argv = containerOneShotArgs(
		{ engine, engineHost, image, storeDir: run.storeDir, pkg: PACKAGE_ROOT, ...ids() },
		{ purpose: "git", volumes, command: ["node", GIT_INSIDE, ...args], workdir: IN.workspace },
	);
	try {
		return (await engineRun(engine, argv, { image, timeoutMs: 120_000 })).stdout;
	} catch (error) {
		// Our script's own words (exit 1), not the engine's.
		if (error instanceof EngineError && error.code === "engine-failed" && error.said)
			throw new Error(error.said.replace(/^\w+: /, ""));
		throw error;
	}
}

/** @param {string} work @param {unknown} error */
function snapshotError(work, error) {
	const message = error instanceof Error ? error.message : String(error);
	if (/no space left on device/i.test(message))
		return new EngineError("disk-full", `snapshot of ${work}: no space left on the disk that holds it`, {
			fix: "free some space; the work is still in the workspace",
		});
	return new EngineError(
		error instanceof EngineError ? error.code : "engine-failed",
		`snapshot of ${work}: ${message}`,
	);
}

/**
 * Fetches the run's branch and its wip snapshot into refs/agent-board/remote[-wip]/<rowId> of the
 * user's repository with `git fetch` (the workspace's side is upload-pack, which runs nothing its
 * config names), never git porcelain in the workspace. Its `.git` must be a real directory: a symlink
 * or gitdir file planted by the agent would point this side's git at another repository.
 * @param {ContainerRun} run
 */
export async function fetchWork(run) {
	const gitDir = realGitDir(run);
	const snap = await snapshot(run);
	if (!snap) return undefined;
	realGitDir(run);
	return fetchBack({
		repo: run.repo,
		remote: { url: gitDir },
		rowId: run.rowId,
		landing: landingPath(run.storeDir, repoKey(run.repo)),
		base: run.base,
	});
}

/** The workspace's .git, refused unless it is a real directory. @param {ContainerRun} run */
function realGitDir(run) {
	const gitDir = join(containerDirs(run).work, ".git");
	let stat;
	try {
		stat = lstatSync(gitDir);
	} catch {
		stat = undefined;
	}
	if (!stat?.isDirectory())
		throw new Error(
			`${gitDir} is not a directory any more (replaced from inside the container): nothing fetched, the workspace is kept`,
		);
	return gitDir;
}
