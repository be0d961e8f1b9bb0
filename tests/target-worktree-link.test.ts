/**
 * A target row's worktree is made by its link when the run starts, not by the dispatch (#40, "a dispatch
 * that returns at once"), with a real sshd on 127.0.0.1 and a second Unix user as the host. The board's
 * processes see a git on PATH that logs each `worktree add` (the test's own process does not: the log
 * holds only what the board started): the row's one add is there, from the commit HEAD named when the
 * row was dispatched, though the user committed meanwhile; a cwd whose directory the commit lacks runs at
 * the worktree's top. An add that git refuses fails the run with git's words and keeps the row; its next
 * run makes the worktree and completes.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitDone } from "../test-support/board-helpers.ts";
import { git } from "../test-support/git-repo.ts";
import { dispatchRefused, loggingGit, type LoggingGit } from "../test-support/logging-git.ts";
import { requires, sshdMissing } from "../test-support/requires.ts";
import { startSshBoard, type SshBoard } from "../test-support/ssh-board.ts";

const missing = sshdMissing();
let fixture: SshBoard | undefined;
let scratch = "";
let logged: LoggingGit;
/** The `worktree add` calls the board's processes ran. */
const adds = () => logged.worktreeAdds();

beforeAll(async () => {
	if (missing) return;
	scratch = mkdtempSync(join(tmpdir(), "pab-git-wrap-"));
	logged = loggingGit(scratch);
	fixture = await startSshBoard("pab-target-worktree-", {
		env: () => ({ PATH: `${logged.bin}:${process.env.PATH ?? ""}` }),
	});
	fixture.model.setScript({
		rules: [
			{
				match: "LINK-TREE",
				steps: [{ toolCall: { name: "bash", args: { command: "echo made-there > made.txt" } } }, { text: "Made." }],
			},
		],
	});
}, 180_000);

afterAll(async () => {
	await fixture?.cleanup();
	if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("a target row's worktree", { timeout: 240_000 }, () => {
	it("is made by its link from the commit HEAD named at the dispatch, the cwd's place or the top", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const { board, repo } = fixture as SshBoard;
		const head = git(repo, "rev-parse", "HEAD");
		// A directory the commit does not have: the run goes to the worktree's top.
		const notes = join(repo, "notes");
		mkdirSync(notes, { recursive: true });
		writeFileSync(join(notes, "draft.txt"), "untracked\n");
		const before = adds().length;
		const row = await board.dispatch({ prompt: "LINK-TREE make a file", cwd: notes, target: "h" });
		expect(row.worktreePath).toBeTruthy();
		// The user goes on committing; the row keeps the commit it was dispatched from.
		writeFileSync(join(repo, "later.txt"), "later\n");
		git(repo, "add", "later.txt");
		git(repo, "commit", "-q", "-m", "after the dispatch");

		const done = await waitDone(board, row.id, 120_000);
		expect(done.state, done.error).toBe("completed");
		const worktree = done.worktreePath ?? "";
		expect(adds().slice(before)).toEqual([`-b agent-board/${row.id} ${worktree} ${head}`]);
		expect(readFileSync(join(worktree, "made.txt"), "utf8")).toBe("made-there\n");
		expect(existsSync(join(worktree, "later.txt"))).toBe(false);
		expect(git(worktree, "rev-parse", "--abbrev-ref", "HEAD")).toBe(`agent-board/${row.id}`);
		expect(git(worktree, "merge-base", "--is-ancestor", head, "HEAD")).toBe("");
	});

	it("fails its run with git's words when git refuses, keeps the row, and makes it at the next run", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const { board, repo } = fixture as SshBoard;
		const row = await dispatchRefused(board, logged, repo, () =>
			board.dispatch({ prompt: "LINK-TREE refused", cwd: repo, target: "h" }),
		);

		await board.reply(row.id, "LINK-TREE again");
		const done = await waitDone(board, row.id, 120_000);
		expect(done.state, done.error).toBe("completed");
		expect(readFileSync(join(row.worktreePath ?? "", "made.txt"), "utf8")).toBe("made-there\n");
		expect(adds().filter((line) => line.includes(`agent-board/${row.id} `))).toHaveLength(2);
	});
});
