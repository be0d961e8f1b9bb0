/**
 * HEAD's commit is remembered per repository for a process (git/head-commit.ts: a dispatch that makes a
 * worktree asked git on every call), and the memory never lies: a commit, a branch switch, packed refs, a
 * detached HEAD and a first commit are each seen at the next call, and git is asked again only when a file
 * behind HEAD changed. git is counted through a wrapper first on PATH.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { headCommit } from "../src/board/engine/git/head-commit.ts";
import { git, initRepo } from "../test-support/git-repo.ts";
import { loggingGit, type LoggingGit } from "../test-support/logging-git.ts";

let root: string;
let wrapper: LoggingGit;
const saved = { path: process.env.PATH, ceiling: process.env.GIT_CEILING_DIRECTORIES };
beforeAll(() => {
	root = mkdtempSync(join(tmpdir(), "pab-head-commit-"));
	process.env.GIT_CEILING_DIRECTORIES = root;
	wrapper = loggingGit(root);
	process.env.PATH = `${wrapper.bin}${delimiter}${saved.path ?? ""}`;
});
afterAll(() => {
	process.env.PATH = saved.path;
	if (saved.ceiling === undefined) delete process.env.GIT_CEILING_DIRECTORIES;
	else process.env.GIT_CEILING_DIRECTORIES = saved.ceiling;
	rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

/** How many times headCommit asked git for HEAD so far. */
const asked = (): number => wrapper.calls().filter((line) => line.startsWith("rev-parse --verify -q HEAD")).length;

const commit = (repo: string, name: string): string => {
	writeFileSync(join(repo, name), `${name}\n`);
	git(repo, "add", "-A");
	git(repo, "commit", "-q", "-m", name);
	return git(repo, "rev-parse", "HEAD");
};

describe("headCommit", () => {
	it("asks git once while nothing behind HEAD changes, and sees every change at the next call", () => {
		const repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
		const first = git(repo, "rev-parse", "HEAD");
		const before = asked();
		expect(headCommit(repo)).toBe(first);
		expect(headCommit(repo)).toBe(first);
		expect(headCommit(repo)).toBe(first);
		expect(asked()).toBe(before + 1);

		// A commit on the branch.
		const second = commit(repo, "b.txt");
		expect(headCommit(repo)).toBe(second);
		expect(headCommit(repo)).toBe(second);

		// Another branch, made at the first commit.
		git(repo, "checkout", "-q", "-b", "other", first);
		expect(headCommit(repo)).toBe(first);
		// Back on main, its ref then packed (the loose file goes), then a commit over the packed ref.
		git(repo, "checkout", "-q", "main");
		expect(headCommit(repo)).toBe(second);
		git(repo, "pack-refs", "--all");
		expect(headCommit(repo)).toBe(second);
		const third = commit(repo, "c.txt");
		expect(headCommit(repo)).toBe(third);
		// A branch moved by reset, and a detached HEAD.
		git(repo, "reset", "-q", "--hard", first);
		expect(headCommit(repo)).toBe(first);
		git(repo, "checkout", "-q", "--detach", third);
		expect(headCommit(repo)).toBe(third);
		const asking = asked();
		expect(headCommit(repo)).toBe(third);
		expect(asked()).toBe(asking);
	});

	it("says a repository has no commits until its first, and asks git each time for a linked worktree", () => {
		const empty = initRepo(join(root, "empty"));
		expect(headCommit(empty)).toBeUndefined();
		expect(headCommit(empty)).toBeUndefined();
		const made = commit(empty, "first.txt");
		expect(headCommit(empty)).toBe(made);

		const linked = join(root, "linked");
		git(empty, "worktree", "add", "-q", "-b", "side", linked);
		expect(headCommit(linked)).toBe(made);
		const before = asked();
		const moved = commit(linked, "side.txt");
		expect(headCommit(linked)).toBe(moved);
		expect(headCommit(linked)).toBe(moved);
		expect(asked()).toBe(before + 2);
		// The main checkout's HEAD did not move.
		expect(headCommit(empty)).toBe(made);
	});
});
