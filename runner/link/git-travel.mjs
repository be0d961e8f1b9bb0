// Code travels by git between the user's repository and a target's workspace (docs/engine.md,
// "Targets"). This is the link's side: push the base commit to the target's bare mirror, fetch the
// row's branch and its wip snapshot back, and lay them over the local mirror worktree so it shows
// exactly what the target's worktree shows (committed, modified, untracked and deleted files).
import { createHash } from "node:crypto";
import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { baseRef, branchName, git, revParse, wipRef } from "../far/git-workspace.mjs";
import { gitAsync, landingFetchSync } from "./landing.mjs";

/** @param {string} rowId */
export const remoteBranchRef = (rowId) => `refs/agent-board/remote/${rowId}`;
/** @param {string} rowId */
export const remoteWipRef = (rowId) => `refs/agent-board/remote-wip/${rowId}`;

/**
 * A stable, path-safe name for a repository's mirror at a target: its name plus a hash of where its
 * objects live, so two clones of one project get two mirrors and worktrees of one repo share one.
 * @param {string} repoDir any worktree of the repository
 */
export function repoKey(repoDir) {
	// A repository's top with a .git directory (the usual case, and every row's repo): no git to ask.
	const dotGit = join(repoDir, ".git");
	const plain = existsSync(join(dotGit, "HEAD")) && statSync(dotGit).isDirectory();
	const common = plain
		? realpathSync(dotGit)
		: realpathSync(resolve(repoDir, git(repoDir, ["rev-parse", "--git-common-dir"])));
	const top = plain ? dirname(common) : git(repoDir, ["rev-parse", "--show-toplevel"]);
	const name =
		basename(top)
			.replace(/[^A-Za-z0-9._-]/g, "_")
			.replace(/^[._-]+/, "")
			.slice(0, 40) || "repo";
	return `${name}-${createHash("sha256").update(common).digest("hex").slice(0, 12)}`;
}

/**
 * @typedef {object} GitRemote
 * @property {string} url         ssh://host/abs/path.git, or a local path (container clones, tests)
 * @property {NodeJS.ProcessEnv} [env]  GIT_SSH_COMMAND and friends (see ssh-transport.mjs)
 * @property {string} [receivePack]     remote command that creates the mirror, then runs git-receive-pack
 */

/** @param {string} cwd @param {string[]} args @param {GitRemote} remote */
function gitRemote(cwd, args, remote) {
	return git(cwd, args, { ...remote.env, GIT_TERMINAL_PROMPT: "0" });
}

/**
 * Pushes the commit the run starts from to refs/agent-board/base/<rowId> of the target's mirror (a
 * scratch ref: the target's worktree branch is only moved by the target, see syncWorktree).
 * @param {{ repo: string, remote: GitRemote, rowId: string, commit: string }} options
 */
export function pushBase({ repo, remote, rowId, commit }) {
	const args = ["push", "-q", "--no-verify", "--force"];
	if (remote.receivePack) args.push(`--receive-pack=${remote.receivePack}`);
	gitRemote(repo, [...args, remote.url, `${commit}:${baseRef(rowId)}`], remote);
}

/** What a fetch-back asks for: the row's branch and its wip snapshot, and the refs they become here. @param {string} rowId */
export const fetchRefs = (rowId) => [
	{ from: `refs/heads/${branchName(rowId)}`, to: remoteBranchRef(rowId) },
	{ from: wipRef(rowId), to: remoteWipRef(rowId) },
];
/** @param {string} rowId */
const fetchRefspecs = (rowId) => fetchRefs(rowId).map((ref) => `+${ref.from}:${ref.to}`);

/**
 * Fetches the target's branch and wip snapshot into refs/agent-board/remote[-wip]/<rowId>. With
 * `landing` (landing.mjs) the fetch goes through the landing repository, so it never reads the
 * repository's worktrees (one being created meanwhile fails a plain fetch: "bad object").
 * @param {{ repo: string, remote: GitRemote, rowId: string, landing?: string, base?: string }} options
 * @returns {{ head: string, wip: string }}
 */
export function fetchBack({ repo, remote, rowId, landing, base }) {
	if (landing) {
		const got = landingFetchSync({ repo, landing, remote, refs: fetchRefs(rowId), haves: base ? [base] : [] });
		const head = got.get(remoteBranchRef(rowId));
		const wip = got.get(remoteWipRef(rowId));
		if (!head || !wip) throw new Error(`fetch from ${remote.url} brought no ${branchName(rowId)} or wip snapshot`);
		return { head, wip };
	}
	gitRemote(repo, ["fetch", "-q", "--no-tags", "--no-write-fetch-head", remote.url, ...fetchRefspecs(rowId)], remote);
	const head = revParse(repo, remoteBranchRef(rowId));
	const wip = revParse(repo, remoteWipRef(rowId));
	if (!head || !wip) throw new Error(`fetch from ${remote.url} brought no ${branchName(rowId)} or wip snapshot`);
	return { head, wip };
}

/**
 * Makes the local mirror worktree (on agent-board/<rowId>) show what was fetched: the branch moves to
 * the target's commit and the snapshot becomes uncommitted changes. The previously laid snapshot is
 * read into the index first, so files it added that the new one lacks are removed too. Not blocking:
 * a target's link follows every row of its host meanwhile.
 * @param {{ worktree: string, rowId: string }} options
 * @returns {Promise<{ head: string, wip: string, changed: boolean }>}
 */
export async function layOver({ worktree, rowId }) {
	const run = (/** @type {string[]} */ args) => gitAsync(worktree, args);
	const rev = (/** @type {string} */ name) => run(["rev-parse", "--verify", "-q", name]).catch(() => undefined);
	const branch = `refs/heads/${branchName(rowId)}`;
	const symbolic = await run(["symbolic-ref", "-q", "HEAD"]).catch(() => "");
	if (symbolic !== branch)
		throw new Error(`${worktree} is on ${symbolic || "a detached HEAD"}, not ${branchName(rowId)}`);
	const [head, wip, previous, current] = await Promise.all([
		rev(remoteBranchRef(rowId)),
		rev(remoteWipRef(rowId)),
		rev(wipRef(rowId)),
		rev("HEAD"),
	]);
	if (!head || !wip) throw new Error(`nothing fetched for ${rowId}: fetch it back first`);
	if (previous === wip && current === head) return { head, wip, changed: false };
	if (previous) await run(["read-tree", "--reset", previous]);
	await run(["read-tree", "-u", "--reset", wip]);
	await run(["update-ref", branch, head]);
	await run(["reset", "-q"]);
	await run(["update-ref", wipRef(rowId), wip]);
	return { head, wip, changed: true };
}
