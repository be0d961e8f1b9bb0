/**
 * A cwd's repository root is remembered per process (git/worktree.ts repoRoot: a dispatch asked git on
 * every call), and the memory never lies: a directory that becomes a repository after a first dispatch
 * is found as one, a repository made inside a remembered one takes over, and one whose .git is gone is
 * no longer found.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBoardService } from "../src/board/engine/service.ts";
import { repoRoot } from "../src/board/engine/git/worktree.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { createTestAgent, type TestAgent } from "../test-support/pi-harness.ts";

let agent: TestAgent;
let root: string;
const ceiling = process.env.GIT_CEILING_DIRECTORIES;
beforeAll(() => {
	agent = createTestAgent();
	root = mkdtempSync(join(tmpdir(), "pab-repo-root-"));
	// Wherever TMPDIR lives (inside a checkout too), git looks no higher than the test's own directory.
	process.env.GIT_CEILING_DIRECTORIES = root;
});
afterAll(() => {
	if (ceiling === undefined) delete process.env.GIT_CEILING_DIRECTORIES;
	else process.env.GIT_CEILING_DIRECTORIES = ceiling;
	agent.cleanup();
	rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

describe("repoRoot", () => {
	it("finds a directory that became a repository, a repository made inside one, and forgets one whose .git is gone", () => {
		const outer = join(root, "outer");
		const inner = join(outer, "inner");
		mkdirSync(inner, { recursive: true });
		expect(repoRoot(inner)).toBeUndefined();
		initRepo(outer);
		expect(repoRoot(inner)).toBe(outer);
		expect(repoRoot(inner)).toBe(outer);
		initRepo(inner);
		expect(repoRoot(inner)).toBe(inner);
		expect(repoRoot(outer)).toBe(outer);
		rmSync(join(inner, ".git"), { recursive: true });
		expect(repoRoot(inner)).toBe(outer);
		rmSync(join(outer, ".git"), { recursive: true });
		expect(repoRoot(inner)).toBeUndefined();
		expect(repoRoot(outer)).toBeUndefined();
	});

	it("a dispatch in a directory that became a repository after the first dispatch there names the repository", async () => {
		const board = createBoardService({
			storeDir: join(agent.agentDir, "agent-board"),
			piCommand: ["false"],
			maxConcurrent: 1,
			env: agent.env,
		});
		const cwd = join(root, "later");
		mkdirSync(cwd);
		const before = await board.dispatch({ prompt: "before git init", cwd });
		expect(before.repo).toBeUndefined();
		initRepo(cwd, { "README.md": "now a repository\n" });
		const after = await board.dispatch({ prompt: "after git init", cwd, worktreeMode: "worktree" });
		expect(after.repo).toBe(cwd);
		expect(after.worktreePath).toBeTruthy();
	});
});
