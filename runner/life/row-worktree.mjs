// A row's worktree on branch agent-board/<id>: what it will be (derived from the ids, no git, at the
// dispatch) and the one `git worktree add` that makes it, run by the process that claims the row's run
// (its runner, or a target row's link) when the run starts, so a dispatch returns at once (docs/engine.md,
// "A dispatch that returns at once").
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import { branchName, gitAsync } from "../far/git-workspace.mjs";
import { withLockFile } from "../store/row-lock.mjs";

/** How long one process waits for the store's worktree lock (every other maker's git ahead of it). */
const LOCK_WAIT_MS = 300_000;

/**
 * Where a row runs inside its worktree `path`: the dispatch's cwd at the same place under the repository
 * root `repo` (a cwd outside it: the worktree's top).
 * @param {string} repo @param {string} cwd @param {string} path
 */
export function worktreeRunCwd(repo, cwd, path) {
	const sub = relative(repo, cwd);
	return sub && !sub.startsWith("..") ? join(path, sub) : path;
}

/** Each process's makes one after another, so it waits on the store's lock once, not once per run. */
let chain = Promise.resolve();

/**
 * `git worktree add -b agent-board/<rowId> <path> <base>` in `repo`, holding `<storeDir>/worktree.lock`:
 * git reads every worktree's admin files and fails on one being made meanwhile ("failed to read
 * .git/worktrees/<id>/commondir"). Rejects with git's words.
 * @param {{ storeDir: string, repo: string, rowId: string, path: string, base: string }} plan
 * @returns {Promise<void>}
 */
export function addRowWorktree({ storeDir, repo, rowId, path, base }) {
	const add = () =>
		withLockFile(
			join(storeDir, "worktree.lock"),
			async () => {
				await gitAsync(repo, ["worktree", "add", "-b", branchName(rowId), path, base]);
			},
			{ timeoutMs: LOCK_WAIT_MS, what: "another row's worktree is being made" },
		);
	const made = chain.then(add, add);
	chain = made.then(
		() => undefined,
		() => undefined,
	);
	return made;
}

/**
 * The run's worktree, made now when the run is the one to make it (run.json /worktreeBase: a row's first
 * run, or a later one whose first never made it) and it is not there yet. Returns whether it made it;
 * rejects with a sentence naming the worktree and git's words.
 * @param {{ storeDir: string, repo?: string, rowId: string, worktree?: string, worktreeBase?: string }} config
 * @returns {Promise<boolean>}
 */
export async function makeRunWorktree(config) {
	const { storeDir, repo, rowId, worktree, worktreeBase } = config;
	if (!repo || !worktree || !worktreeBase || existsSync(worktree)) return false;
	try {
		await addRowWorktree({ storeDir, repo, rowId, path: worktree, base: worktreeBase });
	} catch (error) {
		throw new Error(
			`cannot make the row's worktree ${worktree}: ${error instanceof Error ? error.message : String(error)}`,
		);
	}
	return true;
}

/**
 * Where a run in a worktree works: its cwd, or the worktree's top when the worktree's commit has no
 * such directory (a cwd the user had not committed).
 * @param {{ cwd: string, worktree?: string }} config
 */
export function runCwdIn({ cwd, worktree }) {
	return worktree && !existsSync(cwd) && existsSync(worktree) ? worktree : cwd;
}
