/**
 * Merging a worktree row's branch into the main checkout's current branch. The merge is computed
 * off to the side (`git merge-tree --write-tree`, `git commit-tree`); the main checkout is touched
 * only by a final `git merge --ff-only` to an already clean result, so a conflict never leaves a
 * merge in progress, a moved HEAD or a changed file behind. File names come from -z output, whole.
 * Before the main checkout moves the intent is recorded, so a merge killed in between is recognised.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { BoardRow, MergedInfo, MergeIntent, MergeOptions, MergePlan, MergeResult } from "../types.ts";
import { snapshotTree } from "./worktree.ts";
import { notOver } from "../../../../runner/life/phase.mjs";

interface GitRun {
	code: number;
	stdout: string;
	stderr: string;
}

/** stdout as git wrote it: file names are read from -z output, where a leading space is part of the name. */
function run(cwd: string, args: string[], env?: NodeJS.ProcessEnv): GitRun {
	const result = spawnSync("git", args, {
		cwd,
		env: env ?? process.env,
		encoding: "utf8",
		timeout: 60_000,
		maxBuffer: 64 * 1024 * 1024,
	});
	if (result.error) throw new Error(`git ${args[0] ?? ""} failed: ${result.error.message}`);
	return { code: result.status ?? 1, stdout: result.stdout, stderr: result.stderr.trim() };
}

function checked(cwd: string, args: string[], env?: NodeJS.ProcessEnv): string {
	const result = run(cwd, args, env);
	if (result.code !== 0)
		throw new Error(`git ${args.join(" ")} failed in ${cwd}: ${result.stderr || `exit ${result.code}`}`);
	return result.stdout;
}

/** One value (a commit, a count, a branch): trimmed. */
function must(cwd: string, args: string[], env?: NodeJS.ProcessEnv): string {
	return checked(cwd, args, env).trim();
}

/** The NUL-separated fields of -z output, untouched. */
function fields(text: string): string[] {
	const parts = text.split("\0");
	if (parts[parts.length - 1] === "") parts.pop();
	return parts;
}

/**
 * `git status --porcelain -z` as "XY <path>" lines (the porcelain's own layout, so `line.slice(3)` is
 * the path, whatever spaces or characters it holds); a rename or copy names its new path.
 */
function statusLines(cwd: string, untracked: "all" | "no"): string[] {
	const parts = fields(checked(cwd, ["status", "--porcelain=v1", "-z", `--untracked-files=${untracked}`]));
	const out: string[] = [];
	for (let index = 0; index < parts.length; index++) {
		const entry = parts[index] ?? "";
		out.push(entry);
		// "R  new\0old": the field after a rename or copy is the old path.
		if (/^[RC]|^.[RC]/.test(entry)) index += 1;
	}
	return out;
}

/** The files a merge of `tip` into `head` conflicts in (none: the merge is clean), and its tree. */
function tryMerge(repo: string, head: string, tip: string): { tree: string; conflicts: string[] } {
	const merged = run(repo, ["merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", head, tip]);
	if (merged.code !== 0 && merged.code !== 1)
		throw new Error(`git merge-tree failed: ${merged.stderr || `exit ${merged.code}`}. Nothing was changed`);
	const [tree = "", ...conflicts] = fields(merged.stdout);
	return { tree, conflicts: merged.code === 1 ? [...new Set(conflicts)] : [] };
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
	head.stdout = head.stdout.trim();
	if (head.code !== 0)
		throw new Error(`the main checkout ${repo} has no commits on its current branch; nothing can be merged into it`);
	const branch = run(repo, ["symbolic-ref", "-q", "--short", "HEAD"]);
	branch.stdout = branch.stdout.trim();
	if (branch.code !== 0)
		throw new Error(`the main checkout ${repo} is on a detached HEAD; check out the branch to merge into first`);
	const dirty = statusLines(repo, "no");
	if (dirty.length > 0) {
		const shown =
			dirty
				.slice(0, 10)
				.map((line) => `${line.slice(0, 2).trim()} ${line.slice(3)}`)
				.join(", ") + (dirty.length > 10 ? `, … (${dirty.length} in all)` : "");
		throw new Error(
			`the main checkout ${repo} has uncommitted changes (${shown}); commit or stash them first. Nothing was changed`,
		);
	}
	return { head: head.stdout, into: branch.stdout };
}

/** Everything a merge will do, or the reason it cannot run. Reads only. */
export function planMerge(row: BoardRow): MergePlan {
	if (!row.branch || !row.repo)
		throw new Error(`row ${row.id} has no worktree; only rows dispatched into a worktree can be merged`);
	if (notOver(row))
		throw new Error(`row ${row.id} is still ${row.state}; wait for it to finish or stop it before merging`);
	const { repo, branch, worktreePath } = row;
	if (!existsSync(repo)) throw new Error(`repository ${repo} of row ${row.id} no longer exists`);
	const { head, into } = checkMain(repo);
	if (run(repo, ["rev-parse", "--verify", "-q", `refs/heads/${branch}`]).code !== 0) {
		throw new Error(`branch ${branch} of row ${row.id} was removed; there is nothing to merge`);
	}
	if (!worktreePath || !existsSync(worktreePath)) {
		const already = row.merged ? ` (it was merged into ${row.merged.into} as ${row.merged.commit.slice(0, 12)})` : "";
		throw new Error(
			`the worktree of row ${row.id}${worktreePath ? ` (${worktreePath})` : ""} was removed${already}; nothing to merge`,
		);
	}
	const checkedOut = run(worktreePath, ["symbolic-ref", "-q", "HEAD"]).stdout.trim();
	if (checkedOut !== `refs/heads/${branch}`) {
		throw new Error(
			`the worktree of row ${row.id} is on ${checkedOut || "a detached HEAD"}, not ${branch}; check out ${branch} there first`,
		);
	}
	if (into === branch)
		throw new Error(`the main checkout is on the row's own branch ${branch}; check out the branch to merge into`);
	const uncommitted = statusLines(worktreePath, "all");
	const commits = Number(must(repo, ["rev-list", "--count", `${head}..refs/heads/${branch}`])) || 0;
	if (commits === 0 && uncommitted.length === 0) {
		const already = row.merged ? `; it was merged into ${row.merged.into} as ${row.merged.commit.slice(0, 12)}` : "";
		throw new Error(`row ${row.id} has nothing to merge: ${branch} has no changes that ${into} lacks${already}`);
	}
	const committed =
		commits > 0
			? fields(checked(repo, ["diff", "--name-only", "--no-renames", "-z", `${head}...refs/heads/${branch}`]))
			: [];
	const pending = uncommitted.map((line) => line.slice(3));
	const files = [...new Set([...committed, ...pending])].sort();
	return { rowId: row.id, branch, worktreePath, repo, into, head, uncommitted, commits, files };
}

/**
 * Commits the worktree's uncommitted changes on the row's branch, through the repository's hooks (a
 * pre-commit hook that fails refuses it, with its words); returns the new commit. A refused commit
 * leaves the worktree's index as it was.
 */
function commitWorktree(row: BoardRow, plan: MergePlan): string {
	const env = commitEnv(plan.worktreePath);
	const index = must(plan.worktreePath, ["rev-parse", "--path-format=absolute", "--git-path", "index"]);
	const saved = existsSync(index) ? readFileSync(index) : undefined;
	must(plan.worktreePath, ["add", "-A", "."], env);
	const commit = run(
		plan.worktreePath,
		["commit", "-q", "-m", `agent-board: work of row "${oneLine(row.name)}" (${row.id})`],
		env,
	);
	if (commit.code !== 0) {
		if (saved) writeFileSync(index, saved);
		const said = [commit.stderr, commit.stdout.trim()].filter(Boolean).join("\n") || `exit ${commit.code}`;
		throw new Error(
			`git commit of row ${row.id}'s changes on ${plan.branch} was refused (a hook of the repository, or git): ${said}\nNothing was committed or merged`,
		);
	}
	return must(plan.worktreePath, ["rev-parse", "HEAD"]);
}

/** What a merge records in the row's meta, and when (both under the row lock). */
export interface MergeHooks {
	/** Before the main checkout moves: what is about to happen, so a merge killed next is recognised. */
	recordIntent(intent: MergeIntent): Promise<void> | void;
	/** The main checkout did not move after all. */
	clearIntent(): Promise<void> | void;
	/** Persists the merged state in the row's meta (called once, after the main checkout moved). */
	recordMerged(info: MergedInfo): Promise<void> | void;
}

/**
 * Whether a merge that recorded `intent` and then stopped (killed, crashed) moved the main checkout:
 * it did when the branch it merged into contains the target. Undefined when git cannot tell now.
 */
export function intentOutcome(repo: string, intent: MergeIntent): { merged?: MergedInfo } | undefined {
	if (!existsSync(repo)) return undefined;
	const contains = run(repo, ["merge-base", "--is-ancestor", intent.target, `refs/heads/${intent.into}`]);
	if (contains.code === 0) return { merged: { at: intent.at, commit: intent.target, into: intent.into } };
	// 1: not contained; 128: the target is gone (a trial commit collected): either way nothing moved.
	return contains.code === 1 || contains.code === 128 ? {} : undefined;
}

function conflictResult(plan: MergePlan, files: string[], committed: string | undefined): MergeResult {
	// Uncommitted work stays uncommitted on a conflict, and git merge refuses to run over it.
	const commitFirst =
		plan.uncommitted.length > 0 && !committed ? `Commit your uncommitted changes on ${plan.branch} first. ` : "";
	const followUp = `${commitFirst}Bring your branch ${plan.branch} up to date with ${plan.into}: run \`git merge ${plan.into}\` in this worktree, resolve the conflicts in ${files.join(", ")}, commit the result and say when it is done.`;
	return { status: "conflict", plan, files, committed, followUp };
}

export async function mergeRow(row: BoardRow, options: MergeOptions, hooks: MergeHooks): Promise<MergeResult> {
	let plan = planMerge(row);
	if (options.dryRun) return { status: "planned", plan };
	let committed: string | undefined;
	if (plan.uncommitted.length > 0) {
		if (!options.commit) {
			const shown = plan.uncommitted
				.slice(0, 10)
				.map((line) => `  ${line}`)
				.join("\n");
			throw new Error(
				`row ${row.id} has uncommitted changes in its worktree:\n${shown}\nthey must be committed on ${plan.branch} first: confirm it (headless: merge ${row.id} --commit). Nothing was changed`,
			);
		}
		// Tried first with the worktree's files committed off to the side (no branch moves): a
		// conflict then leaves no commit on the row's branch that the row did not make.
		const trial = must(
			plan.repo,
			[
				"commit-tree",
				snapshotTree(plan.worktreePath),
				"-p",
				`refs/heads/${plan.branch}`,
				"-m",
				"agent-board: merge trial",
			],
			commitEnv(plan.repo),
		);
		const early = tryMerge(plan.repo, plan.head, trial).conflicts;
		if (early.length > 0) return conflictResult(plan, early, undefined);
		committed = commitWorktree(row, plan);
		plan = planMerge(row);
	}
	const { repo, head, branch, into } = plan;
	const tip = must(repo, ["rev-parse", `refs/heads/${branch}`]);
	// Only a hook that changed the files can make this differ from the trial: then its commit stays.
	const { tree, conflicts } = tryMerge(repo, head, tip);
	if (conflicts.length > 0) return conflictResult(plan, conflicts, committed);
	const fastForward = run(repo, ["merge-base", "--is-ancestor", head, tip]).code === 0;
	const target = fastForward
		? tip
		: must(
				repo,
				[
					"commit-tree",
					tree,
					"-p",
					head,
					"-p",
					tip,
					"-m",
					`Merge agent-board row "${oneLine(row.name)}" (${row.id}) into ${into}`,
				],
				commitEnv(repo),
			);
	// The checkout may have changed while the merge was computed: check again right before moving it.
	const now = checkMain(repo);
	if (now.head !== head || now.into !== into)
		throw new Error(
			`the main checkout moved while the merge was prepared (${into} is now ${now.into} at ${now.head.slice(0, 12)}); merge again`,
		);
	await hooks.recordIntent({ at: Date.now(), head, target, into });
	const ff = run(repo, ["merge", "--ff-only", "-q", target]);
	if (ff.code !== 0) {
		await hooks.clearIntent();
		throw new Error(`git could not update the main checkout: ${ff.stderr || `exit ${ff.code}`}. Nothing was changed`);
	}
	const after = must(repo, ["rev-parse", "HEAD"]);
	await hooks.recordMerged({ at: Date.now(), commit: after, into });
	return { status: "merged", plan, commit: after, fastForward, committed };
}
