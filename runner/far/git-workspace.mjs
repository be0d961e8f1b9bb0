// The git side of a target's workspace, run where the workspace is (the ssh host, or this machine for
// a container's clone): the bare mirror the link pushes to, the row's worktree cut from it, and the
// snapshot of uncommitted work the link fetches back. The agent's own index is never touched: the
// snapshot is built in a temporary index. Snapshots run git without blocking: host-agent follows every
// row of a host in one process, and a row's git must not hold another row's events.
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync, unlinkSync, utimesSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { DIR_MODE } from "../store/fs-util.mjs";

/** Commits we make (the wip snapshot) need an identity; the host's git may have none. */
const IDENTITY = {
	GIT_AUTHOR_NAME: "agent-board",
	GIT_AUTHOR_EMAIL: "agent-board@localhost",
	GIT_COMMITTER_NAME: "agent-board",
	GIT_COMMITTER_EMAIL: "agent-board@localhost",
};

/** @param {string} rowId */
export const branchName = (rowId) => `agent-board/${rowId}`;
/** @param {string} rowId */
export const baseRef = (rowId) => `refs/agent-board/base/${rowId}`;
/** @param {string} rowId */
export const wipRef = (rowId) => `refs/agent-board/wip/${rowId}`;

/**
 * @param {string} cwd @param {string[]} args @param {NodeJS.ProcessEnv} [env] @param {string} [input] stdin
 * @returns {string} trimmed stdout; throws with git's stderr
 */
export function git(cwd, args, env, input) {
	try {
		return execFileSync("git", args, {
			cwd,
			encoding: "utf8",
			stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
			...(input === undefined ? {} : { input }),
			env: env ? { ...process.env, ...env } : undefined,
		}).trim();
	} catch (error) {
		const stderr = String(/** @type {{ stderr?: unknown }} */ (error).stderr ?? "").trim();
		throw new Error(
			`git ${args[0]} in ${cwd}: ${stderr || (error instanceof Error ? error.message : String(error))}`,
		);
	}
}

/**
 * git, not blocking. @param {string} cwd @param {string[]} args @param {NodeJS.ProcessEnv} [env]
 * @returns {Promise<string>} trimmed stdout; rejects with git's stderr
 */
export function gitAsync(cwd, args, env) {
	return new Promise((resolvePromise, reject) => {
		execFile(
			"git",
			args,
			{ cwd, encoding: "utf8", maxBuffer: 16 * 1024 * 1024, env: env ? { ...process.env, ...env } : undefined },
			(error, stdout, stderr) => {
				if (error) reject(new Error(`git ${args[0]} in ${cwd}: ${String(stderr).trim() || error.message}`));
				else resolvePromise(String(stdout).trim());
			},
		);
	});
}

/** revParse, not blocking. @param {string} cwd @param {string} rev @returns {Promise<string | undefined>} */
function revParseAsync(cwd, rev) {
	return gitAsync(cwd, ["rev-parse", "--verify", "-q", rev]).catch(() => undefined);
}

/** @param {string} cwd @param {string} rev @returns {string | undefined} */
export function revParse(cwd, rev) {
	try {
		return git(cwd, ["rev-parse", "--verify", "-q", rev]);
	} catch {
		return undefined;
	}
}

/** @param {string} cwd @param {string} ancestor @param {string} descendant */
function isAncestor(cwd, ancestor, descendant) {
	try {
		git(cwd, ["merge-base", "--is-ancestor", ancestor, descendant]);
		return true;
	} catch {
		return false;
	}
}

/** Creates the bare mirror when missing; true when this call made it. @param {string} repo */
export function ensureMirror(repo) {
	if (!isAbsolute(repo)) throw new Error(`mirror path must be absolute: ${repo}`);
	return ensureBare(repo);
}

/**
 * Creates a bare repository at `repo` when it has none, with its `config` set before anyone sees it.
 * Made aside and renamed into place: two `git init` at one path at once fail on each other's
 * config.lock (a burst's pushes and launches meet at a new host, two links' fetch-backs at a landing).
 * @param {string} repo @param {{ config?: string[][], parentMode?: number }} [options] @returns {boolean}
 */
export function ensureBare(repo, options = {}) {
	if (existsSync(join(repo, "HEAD"))) return false;
	mkdirSync(dirname(repo), { recursive: true, mode: options.parentMode ?? DIR_MODE });
	const aside = `${repo}.new-${process.pid}-${randomBytes(4).toString("hex")}`;
	try {
		git(dirname(repo), ["init", "-q", "--bare", aside]);
		for (const [key = "", value = ""] of options.config ?? []) git(aside, ["config", key, value]);
		renameSync(aside, repo);
		return true;
	} catch (error) {
		rmSync(aside, { recursive: true, force: true });
		if (existsSync(join(repo, "HEAD"))) return false;
		throw new Error(`cannot make the repository ${repo}: ${error instanceof Error ? error.message : String(error)}`);
	}
}

/**
 * The tree of everything in the worktree now (tracked, modified, untracked, minus ignored and deleted
 * files), built in a temporary copy of the index.
 * @param {string} worktree
 */
export function worktreeTree(worktree) {
	const temp = tempIndex(worktree, git(worktree, ["rev-parse", "--git-path", "index"]));
	try {
		const env = { GIT_INDEX_FILE: temp };
		git(worktree, ["add", "-A", "--", "."], env);
		return git(worktree, ["write-tree"], env);
	} finally {
		dropIndex(temp);
	}
}

/** worktreeTree, not blocking. @param {string} worktree @returns {Promise<string>} */
async function worktreeTreeAsync(worktree) {
	const temp = tempIndex(worktree, await gitAsync(worktree, ["rev-parse", "--git-path", "index"]));
	try {
		const env = { GIT_INDEX_FILE: temp };
		await gitAsync(worktree, ["add", "-A", "--", "."], env);
		return await gitAsync(worktree, ["write-tree"], env);
	} finally {
		dropIndex(temp);
	}
}

/** A copy of the worktree's index (`indexPath` as git names it) to build a tree in. @param {string} worktree @param {string} indexPath */
function tempIndex(worktree, indexPath) {
	const index = resolve(worktree, indexPath);
	const temp = `${index}.agent-board-${process.pid}-${Date.now()}-${randomBytes(3).toString("hex")}`;
	if (existsSync(index)) {
		copyFileSync(index, temp);
		// Keep the index's own mtime: git's racy-entry check compares file mtimes against it, and a
		// fresh copy would make a same-size edit made in the index's second look unchanged.
		const { atime, mtime } = statSync(index);
		utimesSync(temp, atime, mtime);
	}
	return temp;
}

/** @param {string} temp */
function dropIndex(temp) {
	try {
		unlinkSync(temp);
	} catch {
		// Never created.
	}
}

/**
 * Writes refs/agent-board/wip/<rowId>: a commit of the worktree's tree on top of HEAD. Unchanged work
 * keeps the same commit, so its id says whether anything changed.
 * @param {string} worktree @param {string} rowId
 * @returns {Promise<{ head: string, wip: string, tree: string }>}
 */
export async function snapshotWip(worktree, rowId) {
	if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(rowId)) throw new Error(`bad row id: ${JSON.stringify(rowId)}`);
	const head = await gitAsync(worktree, ["rev-parse", "HEAD"]);
	const tree = await worktreeTreeAsync(worktree);
	const previous = await revParseAsync(worktree, wipRef(rowId));
	if (
		previous &&
		(await revParseAsync(worktree, `${previous}^{tree}`)) === tree &&
		(await revParseAsync(worktree, `${previous}^`)) === head
	) {
		return { head, wip: previous, tree };
	}
	const wip = await gitAsync(worktree, ["commit-tree", tree, "-p", head, "-m", `agent-board wip ${rowId}`], IDENTITY);
	await gitAsync(worktree, ["update-ref", wipRef(rowId), wip]);
	return { head, wip, tree };
}

/**
 * Makes the row's worktree (cut from the mirror on agent-board/<rowId>) start from `base`, the commit
 * the link pushed to refs/agent-board/base/<rowId>, without losing anything the target has:
 * created at base; unchanged; moved to base when its files already are base (a local merge --commit
 * of fetched-back work); fast-forwarded when clean; kept when the target is ahead; else refused.
 * @param {{ mirror: string, worktree: string, rowId: string, base: string }} options
 * @returns {{ head: string, action: "created" | "unchanged" | "moved" | "fast-forward" | "kept" }}
 */
export function syncWorktree({ mirror, worktree, rowId, base }) {
	const branch = branchName(rowId);
	if (!existsSync(worktree)) {
		mkdirSync(dirname(worktree), { recursive: true, mode: DIR_MODE });
		// A new row's branch is created with its worktree (one git call on the way to the first request).
		try {
			git(mirror, ["worktree", "add", "-q", "-b", branch, worktree, base]);
			return { head: base, action: "created" };
		} catch (error) {
			if (!revParse(mirror, `${base}^{commit}`))
				throw new Error(`base commit ${base} is not in ${mirror} (push it first)`);
			if (!revParse(mirror, `refs/heads/${branch}`)) throw error;
		}
		// The branch exists (an earlier run here): its worktree was removed, so it is registered again.
		git(mirror, ["worktree", "prune"]);
		git(mirror, ["worktree", "add", "-q", worktree, branch]);
	} else if (!revParse(mirror, `${base}^{commit}`))
		throw new Error(`base commit ${base} is not in ${mirror} (push it first)`);
	const symbolic = git(worktree, ["symbolic-ref", "-q", "HEAD"]);
	if (symbolic !== `refs/heads/${branch}`)
		throw new Error(`${worktree} is on ${symbolic || "a detached HEAD"}, not ${branch}`);
	const head = git(worktree, ["rev-parse", "HEAD"]);
	if (head === base) return { head, action: "unchanged" };
	const tree = worktreeTree(worktree);
	if (tree === revParse(worktree, `${base}^{tree}`)) {
		git(worktree, ["reset", "-q", base]);
		return { head: base, action: "moved" };
	}
	if (tree === revParse(worktree, "HEAD^{tree}") && isAncestor(worktree, head, base)) {
		git(worktree, ["reset", "-q", "--hard", base]);
		return { head: base, action: "fast-forward" };
	}
	if (isAncestor(worktree, base, head)) return { head, action: "kept" };
	throw new Error(
		`the workspace ${worktree} has work that is not in the pushed base ${base.slice(0, 12)} (fetch it back first)`,
	);
}

/**
 * A container's /workspace: `git clone --shared` of the user's repository on agent-board/<rowId> at
 * `base`. Its objects are borrowed through alternates, which the container gets mounted read-only at
 * the same path, so it can neither need a copy nor write into the user's objects (a hard-linked clone
 * would let it). Created once; a workspace the container has had is never run git in on this side
 * (its config and hooks are the agent's to write).
 * @param {{ source: string, worktree: string, rowId: string, base: string }} options
 * @returns {{ head: string, action: "created" | "existing", objects: string }}
 */
export function ensureClone({ source, worktree, rowId, base }) {
	const objects = resolve(source, git(source, ["rev-parse", "--git-common-dir"]), "objects");
	if (existsSync(worktree)) return { head: base, action: "existing", objects };
	mkdirSync(dirname(worktree), { recursive: true, mode: DIR_MODE });
	git(dirname(worktree), ["clone", "-q", "--shared", "--no-checkout", source, worktree]);
	git(worktree, ["remote", "remove", "origin"]);
	git(worktree, ["checkout", "-q", "-b", branchName(rowId), base]);
	return { head: base, action: "created", objects };
}
