/**
 * A row's worktree is made by the runner that claims its run, not by the dispatch (#40, "a dispatch that
 * returns at once"): the real runner and pi with the scripted model, in a temporary repository. The
 * board's processes see a git on PATH that logs each `worktree add` (the test's own process does not, so
 * the log holds only what the board started). A worktree row's one add is there, from the commit HEAD
 * named at the dispatch though the user committed meanwhile, and a cwd the commit lacks works at the
 * worktree's top; an attempt set of 8 at a limit of 2 is 8 adds by 8 runners; an add git refuses fails
 * the run with git's words and keeps the row, whose next run makes it; a row stopped in the queue never
 * had one, and its diff says so.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readRowDiff } from "../src/board/view-model/diff.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { git, initRepo } from "../test-support/git-repo.ts";
import { dispatchRefused, loggingGit } from "../test-support/logging-git.ts";
import { createTestAgent, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
const scratches: string[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
	for (const dir of scratches) rmSync(dir, { recursive: true, force: true });
});

/** An agent whose board sees the logging git, a repository, and the `worktree add` lines so far. */
function setup() {
	const scratch = mkdtempSync(join(tmpdir(), "pab-git-wrap-"));
	scratches.push(scratch);
	const logged = loggingGit(scratch);
	const agent = createTestAgent({
		env: { PATH: `${logged.bin}:${dirname(process.execPath)}:${process.env.PATH ?? ""}` },
		script: {
			rules: [
				{
					match: "WHERE",
					steps: [{ toolCall: { name: "bash", args: { command: "pwd > where.txt" } } }, { text: "Noted." }],
				},
				{ match: "HOLD", steps: [{ stall: true }] },
			],
			fallback: [{ text: "ok" }],
		},
	});
	agents.push(agent);
	const repo = initRepo(join(agent.root, "repo"), { "a.txt": "a\n" });
	return { agent, repo, adds: () => logged.worktreeAdds(), logged };
}

describe("a row's worktree, made by its runner", { timeout: 240_000 }, () => {
	it("from the commit HEAD named at the dispatch, at the cwd's place or the worktree's top", async () => {
		const { agent, repo, adds } = setup();
		const board = boardFor(agent);
		const head = git(repo, "rev-parse", "HEAD");
		const notes = join(repo, "notes");
		mkdirSync(notes);
		writeFileSync(join(notes, "draft.txt"), "untracked\n");
		const row = await board.dispatch({ prompt: "WHERE am I", cwd: notes, worktreeMode: "worktree" });
		writeFileSync(join(repo, "later.txt"), "later\n");
		git(repo, "add", "later.txt");
		git(repo, "commit", "-q", "-m", "after the dispatch");

		const done = await waitDone(board, row.id, 120_000);
		expect(done.state, done.error).toBe("completed");
		const worktree = done.worktreePath ?? "";
		expect(adds()).toEqual([`-b agent-board/${row.id} ${worktree} ${head}`]);
		expect(readFileSync(join(worktree, "where.txt"), "utf8").trim()).toBe(realpathSync(worktree));
		expect(existsSync(join(worktree, "later.txt"))).toBe(false);
		expect(git(worktree, "rev-parse", "--abbrev-ref", "HEAD")).toBe(`agent-board/${row.id}`);
	});

	it("an attempt set of 8 at a limit of 2: each attempt's worktree made by its own runner, from one commit", async () => {
		const { agent, repo, adds } = setup();
		const board = boardFor(agent, { maxConcurrent: 2 });
		const head = git(repo, "rev-parse", "HEAD");
		const rows = await board.dispatchAttempts({ prompt: "eight ways", cwd: repo, count: 8 });
		expect(rows).toHaveLength(8);
		for (const row of rows) expect((await waitDone(board, row.id, 120_000)).state).toBe("completed");
		expect(adds().sort()).toEqual(rows.map((row) => `-b agent-board/${row.id} ${row.worktreePath} ${head}`).sort());
		for (const row of rows) expect(git(row.worktreePath ?? "", "rev-parse", "HEAD")).toBe(head);
	});

	it("fails its run with git's words when git refuses, keeps the row, and makes it at the next run", async () => {
		const { agent, repo, adds, logged } = setup();
		const board = boardFor(agent);
		const row = await dispatchRefused(board, logged, repo, () =>
			board.dispatch({ prompt: "WHERE refused", cwd: repo, worktreeMode: "worktree" }),
		);

		await board.reply(row.id, "WHERE now");
		const done = await waitDone(board, row.id, 120_000);
		expect(done.state, done.error).toBe("completed");
		expect(readFileSync(join(row.worktreePath ?? "", "where.txt"), "utf8").trim()).toBe(
			realpathSync(row.worktreePath ?? ""),
		);
		expect(adds()).toHaveLength(2);
	});

	it("a row stopped in the queue never had a worktree, and its diff says so", async () => {
		const { agent, repo, adds } = setup();
		const board = boardFor(agent, { maxConcurrent: 1 });
		const holder = await board.dispatch({ prompt: "HOLD the slot", cwd: repo });
		const queued = await board.dispatch({ prompt: "WHERE queued", cwd: repo, worktreeMode: "worktree" });
		expect((await board.get(queued.id))?.state).toBe("queued");
		expect(await readRowDiff(queued)).toEqual(["(no worktree yet: its run makes it when it starts)"]);
		await board.stop(queued.id);
		const stopped = await waitDone(board, queued.id, 60_000);
		expect(stopped.state).toBe("stopped");
		await board.stop(holder.id);
		await waitDone(board, holder.id, 60_000);
		expect(adds()).toEqual([]);
		expect(await readRowDiff(stopped)).toEqual([`(no worktree: ${queued.worktreePath} is not there)`]);
	});
});
