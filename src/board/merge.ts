/**
 * Merging a worktree row's branch into the main checkout's current branch. The merge is computed
 * off to the side (`git merge-tree --write-tree`, `git commit-tree`); the main checkout is touched
 * only by a final `git merge --ff-only` to an already clean result, so a conflict never leaves a
 * merge in progress, a moved HEAD or a changed file behind.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { BoardRow, MergedInfo, MergeOptions, MergePlan, MergeResult } from "./types.ts";

interface GitRun {
	code: number;
	stdout: string;
	stderr: string;
}

function run(cwd: string, args: string[], env?: NodeJS.ProcessEnv): GitRun {
	const result = spawnSync("git", args, { cwd, env: env ?? process.env, encoding: "utf8", timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
	if (result.error) throw new Error(`git ${args[0] ?? ""} failed: ${result.error.message}`);
	return { code: result.status ?? 1, stdout: result.stdout.trim(), stderr: result.stderr.trim() };
}

function must(cwd: string, args: string[], env?: NodeJS.ProcessEnv): string {
	const result = run(cwd, args, env);
	if (result.code !== 0) throw new Error(`git ${args.join(" ")} failed in ${cwd}: ${result.stderr || `exit ${result.code}`}`);
	return result.stdout;
}

function lines(text: string): string[] {
	return text.split("\n").filter(Boolean);
}

/** Commits need an identity; a machine without one gets a board identity instead of a failed merge. */
function commitEnv(cwd: string): NodeJS.ProcessEnv {
	const has = (key: string) => run(cwd, ["config", key]).code === 0;
	if (has("user.name") && has("user.email")) return process.env;
	return {
		...process.env,
		GIT_AUTHOR_NAME: process.env.GIT_AUTHOR_NAME ?? "agent-board",
		GIT_AUTHOR_EMAIL: process.env.GIT_AUTHOR_EMAIL ?? "agent-board@localhost",
		GIT_COMMITTER_NAME: process.env.GIT_COMMITTER_NAME ?? "agent-board",
		GIT_COMMITTER_EMAIL: process.env.GIT_COMMITTER_EMAIL ?? "agent-board@localhost",
	};
}

function oneLine(text: string): string {
	return text.replace(/\s+/g, " ").trim().slice(0, 72);
}

/** The main checkout must be on a branch with commits and no uncommitted changes to tracked files. */
function checkMain(repo: string): { head: string; into: string } {
	const head = run(repo, ["rev-parse", "--verify", "-q", "HEAD"]);
	if (head.code !== 0) throw new Error(`the main checkout ${repo} has no commits on its current branch; nothing can be merged into it`);
	const branch = run(repo, ["symbolic-ref", "-q", "--short", "HEAD"]);
	if (branch.code !== 0) throw new Error(`the main checkout ${repo} is on a detached HEAD; check out the branch to merge into first`);
	const dirty = lines(must(repo, ["status", "--porcelain", "--untracked-files=no"]));
	if (dirty.length > 0) {
		const shown = dirty.slice(0, 10).map((line) => line.trim()).join(", ") + (dirty.length > 10 ? `, … (${dirty.length} in all)` : "");
		throw new Error(`the main checkout ${repo} has uncommitted changes (${shown}); commit or stash them first. Nothing was changed`);
	}
	return { head: head.stdout, into: branch.stdout };
}

/** Everything a merge will do, or the reason it cannot run. Reads only. */
export function planMerge(row: BoardRow): MergePlan {
	if (!row.branch || !row.repo) throw new Error(`row ${row.id} has no worktree; only rows dispatched into a worktree can be merged`);
	if (row.state === "queued" || row.state === "working" || row.alive) throw new Error(`row ${row.id} is still ${row.state}; wait for it to finish or stop it before merging`);
	const { repo, branch, worktreePath } = row;
	if (!existsSync(repo)) throw new Error(`repository ${repo} of row ${row.id} no longer exists`);
	const { head, into } = checkMain(repo);
	if (run(repo, ["rev-parse", "--verify", "-q", `refs/heads/${branch}`]).code !== 0) {
		throw new Error(`branch ${branch} of row ${row.id} was removed; there is nothing to merge`);
	}
	if (!worktreePath || !existsSync(worktreePath)) {
		const already = row.merged ? ` (it was merged into ${row.merged.into} as ${row.merged.commit.slice(0, 12)})` : "";
		throw new Error(`the worktree of row ${row.id}${worktreePath ? ` (${worktreePath})` : ""} was removed${already}; nothing to merge`);
	}
	const checkedOut = run(worktreePath, ["symbolic-ref", "-q", "HEAD"]).stdout;
	if (checkedOut !== `refs/heads/${branch}`) {
		throw new Error(`the worktree of row ${row.id} is on ${checkedOut || "a detached HEAD"}, not ${branch}; check out ${branch} there first`);
	}
	if (into === branch) throw new Error(`the main checkout is on the row's own branch ${branch}; check out the branch to merge into`);
	const uncommitted = lines(must(worktreePath, ["status", "--porcelain", "--untracked-files=all"]));
	const commits = Number(must(repo, ["rev-list", "--count", `${head}..refs/heads/${branch}`])) || 0;
	if (commits === 0 && uncommitted.length === 0) {
		const already = row.merged ? `; it was merged into ${row.merged.into} as ${row.merged.commit.slice(0, 12)}` : "";
		throw new Error(`row ${row.id} has nothing to merge: ${branch} has no changes that ${into} lacks${already}`);
	}
	const committed = commits > 0 ? lines(must(repo, ["diff", "--name-only", "--no-renames", `${head}...refs/heads/${branch}`])) : [];
	const pending = uncommitted.map((line) => line.slice(3).replace(/^.* -> /, ""));
	const files = [...new Set([...committed, ...pending])].sort();
	return { rowId: row.id, branch, worktreePath, repo, into, head, uncommitted, commits, files };
}

/** Commits the worktree's uncommitted changes on the row's branch; returns the new commit. */
function commitWorktree(row: BoardRow, plan: MergePlan): string {
	const env = commitEnv(plan.worktreePath);
	must(plan.worktreePath, ["add", "-A", "."], env);
	must(plan.worktreePath, ["commit", "-q", "--no-verify", "-m", `agent-board: work of row "${oneLine(row.name)}" (${row.id})`], env);
	return must(plan.worktreePath, ["rev-parse", "HEAD"]);
}

export interface MergeHooks {
	/** Persists the merged state in the row's meta (called once, after the main checkout moved). */
	recordMerged(info: MergedInfo): Promise<void> | void;
}

export async function mergeRow(row: BoardRow, options: MergeOptions, hooks: MergeHooks): Promise<MergeResult> {
	let plan = planMerge(row);
	if (options.dryRun) return { status: "planned", plan };
	let committed: string | undefined;
	if (plan.uncommitted.length > 0) {
		if (!options.commit) {
			const shown = plan.uncommitted.slice(0, 10).map((line) => `  ${line}`).join("\n");
			throw new Error(
				`row ${row.id} has uncommitted changes in its worktree:\n${shown}\nthey must be committed on ${plan.branch} first: confirm it (headless: merge ${row.id} --commit). Nothing was changed`,
			);
		}
		committed = commitWorktree(row, plan);
		plan = planMerge(row);
	}
	const { repo, head, branch, into } = plan;
	const tip = must(repo, ["rev-parse", `refs/heads/${branch}`]);
	const merged = run(repo, ["merge-tree", "--write-tree", "--name-only", "--no-messages", head, tip]);
	if (merged.code === 1) {
		const files = [...new Set(lines(merged.stdout).slice(1))];
		const followUp = `Bring your branch ${branch} up to date with ${into}: run \`git merge ${into}\` in this worktree, resolve the conflicts in ${files.join(", ")}, commit the result and say when it is done.`;
		return { status: "conflict", plan, files, committed, followUp };
	}
	if (merged.code !== 0) throw new Error(`git merge-tree failed: ${merged.stderr || `exit ${merged.code}`}. Nothing was changed`);
	const tree = lines(merged.stdout)[0] ?? "";
	const fastForward = run(repo, ["merge-base", "--is-ancestor", head, tip]).code === 0;
	const target = fastForward
		? tip
		: must(repo, ["commit-tree", tree, "-p", head, "-p", tip, "-m", `Merge agent-board row "${oneLine(row.name)}" (${row.id}) into ${into}`], commitEnv(repo));
	// The checkout may have changed while the merge was computed: check again right before moving it.
	const now = checkMain(repo);
	if (now.head !== head || now.into !== into) throw new Error(`the main checkout moved while the merge was prepared (${into} is now ${now.into} at ${now.head.slice(0, 12)}); merge again`);
	const ff = run(repo, ["merge", "--ff-only", "-q", target]);
	if (ff.code !== 0) throw new Error(`git could not update the main checkout: ${ff.stderr || `exit ${ff.code}`}. Nothing was changed`);
	const after = must(repo, ["rev-parse", "HEAD"]);
	await hooks.recordMerged({ at: Date.now(), commit: after, into });
	return { status: "merged", plan, commit: after, fastForward, committed };
}
