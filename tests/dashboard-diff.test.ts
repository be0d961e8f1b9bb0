/** The diff viewer's source: a real git worktree against its branch point, untracked files included. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readRowDiff, toNumberedDiff } from "../src/board/view-model/diff.ts";
import { makeRow } from "../test-support/fake-board-service.ts";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

function git(cwd: string, ...args: string[]): string {
	return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
		cwd,
		encoding: "utf8",
	});
}

describe("worktree diff", () => {
	it("shows committed and uncommitted changes since the branch point, not the main checkout's later commits", async () => {
		const root = mkdtempSync(join(tmpdir(), "pab-diff-"));
		dirs.push(root);
		const repo = join(root, "repo");
		execFileSync("mkdir", ["-p", repo]);
		git(repo, "init", "-q");
		writeFileSync(join(repo, "a.txt"), "one\ntwo\n");
		git(repo, "add", ".");
		git(repo, "commit", "-q", "-m", "base");
		const wt = join(root, "wt");
		git(repo, "worktree", "add", "-q", "-b", "board/x", wt);
		writeFileSync(join(wt, "a.txt"), "one\ntwo changed\n");
		git(wt, "commit", "-q", "-am", "worker change");
		writeFileSync(join(wt, "a.txt"), "one\ntwo changed\nthree\n");
		writeFileSync(join(wt, "new.txt"), "fresh\n");
		// The main checkout moves on; that must not show up in the row's diff.
		writeFileSync(join(repo, "main-only.txt"), "main\n");
		git(repo, "add", ".");
		git(repo, "commit", "-q", "-m", "main moves");

		const lines = await readRowDiff(
			makeRow({ repo, cwd: repo, worktreePath: wt, branch: "board/x", worktreeMode: "worktree" }),
		);
		expect(lines).toContain("-two");
		expect(lines).toContain("+two changed");
		expect(lines).toContain("+three");
		// A new file shows as a real diff: its lines added.
		expect(lines).toContain("+++ b/new.txt");
		expect(lines).toContain("+fresh");
		expect(lines.join("\n")).not.toContain("main-only.txt");
		expect(await readRowDiff(makeRow({}))).toEqual(["(not a worktree row: no diff)"]);
		// Numbered for pi's renderDiff: the new file's lines count from 1, and nothing after a hunk is read as part of it.
		const numbered = toNumberedDiff([...lines, "new untracked file: later.txt"]);
		expect(numbered).toContain("+1 fresh");
		expect(numbered.at(-1)).toBe("new untracked file: later.txt");
	});
});
