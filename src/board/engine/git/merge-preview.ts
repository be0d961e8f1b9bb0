/**
 * Will merging this row conflict? Answered off to the side, the way the merge itself is computed: the
 * row's branch tip (plus its uncommitted and new files, as a throwaway commit built in a temporary
 * index) against the main checkout's HEAD with `git merge-tree --write-tree`. Nothing of the
 * worktree, its index, its branch or the main checkout changes; only loose objects are written.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BoardRow } from "../types.ts";

/** An identity for the throwaway commit, which no ref ever points to. */
const PREVIEW_ENV = {
	GIT_AUTHOR_NAME: "agent-board",
	GIT_AUTHOR_EMAIL: "agent-board@localhost",
	GIT_COMMITTER_NAME: "agent-board",
	GIT_COMMITTER_EMAIL: "agent-board@localhost",
};

function git(
	cwd: string,
	args: string[],
	env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; stdout: string }> {
	return new Promise((resolve, reject) => {
		execFile(
			"git",
			args,
			{ cwd, env, encoding: "utf8", timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
			(error, stdout, stderr) => {
				const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
				if (code < 0) reject(new Error(`git ${args[0] ?? ""} failed: ${stderr.trim() || error?.message}`));
				else resolve({ code, stdout: stdout.trim() });
			},
		);
	});
}

async function must(cwd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
	const result = await git(cwd, args, env);
	if (result.code !== 0) throw new Error(`git ${args.join(" ")} failed in ${cwd} (exit ${result.code})`);
	return result.stdout;
}

/** The worktree's files as a commit on top of its branch tip, or the tip itself when nothing is uncommitted. */
async function worktreeTip(row: BoardRow, tip: string): Promise<string> {
	const dir = row.worktreePath ?? "";
	if (!(await must(dir, ["status", "--porcelain", "--untracked-files=all"]))) return tip;
	const tmp = await mkdtemp(join(tmpdir(), "agent-board-preview-"));
	try {
		const env = { ...process.env, ...PREVIEW_ENV, GIT_INDEX_FILE: join(tmp, "index") };
		await must(dir, ["read-tree", tip], env);
		await git(dir, ["update-index", "-q", "--refresh"], env);
		// The real index is left alone: the temporary one starts from the tip and takes the worktree's files.
		await must(dir, ["add", "-A", "."], env);
		const tree = await must(dir, ["write-tree"], env);
		return await must(dir, ["commit-tree", tree, "-p", tip, "-m", "agent-board merge preview"], env);
	} finally {
		await rm(tmp, { recursive: true, force: true });
	}
}

/** Files a merge of the row into the main checkout's current branch would conflict in; [] when it merges clean. */
export async function mergeConflicts(row: BoardRow): Promise<string[]> {
	if (!row.repo || !row.branch || !row.worktreePath) return [];
	const head = await must(row.repo, ["rev-parse", "HEAD"]);
	const tip = await worktreeTip(row, await must(row.repo, ["rev-parse", `refs/heads/${row.branch}`]));
	const merged = await git(row.repo, ["merge-tree", "--write-tree", "--name-only", "--no-messages", head, tip]);
	if (merged.code !== 1) return [];
	return [...new Set(merged.stdout.split("\n").slice(1).filter(Boolean))];
}
