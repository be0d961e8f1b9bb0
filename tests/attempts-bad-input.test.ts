/**
 * Bad input for attempts and merge: every case is a clear error and changes nothing (rows, the
 * main checkout, the row's branch). Real runner, real pi, scripted model, temporary repositories.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { BoardEngine } from "../src/board/engine/service.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { git, initRepo, snapshot } from "../test-support/git-repo.ts";
import { createTestAgent, runPi, waitFor, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

const WRITE = `printf 'attempt %s\\n' "$AGENT_BOARD_ROW" > shared.txt`;

/** Runs `action`, expects it to fail with `message`, and checks that rows, worktrees and the checkout did not change. */
async function refuses(
	board: BoardEngine,
	repo: string,
	action: () => Promise<unknown>,
	message: RegExp,
): Promise<void> {
	const rows = (await board.list({ includeArchived: true })).map(
		(row) => `${row.id}:${row.worktreePath ?? ""}:${row.merged?.commit ?? ""}`,
	);
	const worktrees = readdirSync(join(board.storeDir, "worktrees"));
	const branches = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads");
	const checkout = snapshot(repo);
	await expect(action()).rejects.toThrow(message);
	expect(
		(await board.list({ includeArchived: true })).map(
			(row) => `${row.id}:${row.worktreePath ?? ""}:${row.merged?.commit ?? ""}`,
		),
	).toEqual(rows);
	expect(readdirSync(join(board.storeDir, "worktrees"))).toEqual(worktrees);
	expect(git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads")).toBe(branches);
	expect(snapshot(repo)).toEqual(checkout);
}

describe("attempt and merge bad input", () => {
	it("gives a clear error and changes nothing for each bad case", async () => {
		const agent = createTestAgent();
		agents.push(agent);
		const release = join(agent.root, "release");
		agent.writeScript({
			rules: [
				{ match: "ATTEMPT", steps: [{ toolCall: { name: "bash", args: { command: WRITE } } }, { text: "Done." }] },
				{ match: "SLOW", steps: [{ waitForFile: release, then: { text: "finally" } }] },
			],
			fallback: [{ text: "ok" }],
		});
		const repo = initRepo(join(agent.root, "repo"), { "shared.txt": "base\n" });
		const empty = initRepo(join(agent.root, "empty"));
		const board = boardFor(agent);

		const [plain, a, b, c, slow] = await Promise.all([
			board.dispatch({ prompt: "ATTEMPT without a worktree", cwd: agent.cwd }),
			board.dispatch({ prompt: "ATTEMPT a", cwd: repo, worktreeMode: "worktree" }),
			board.dispatch({ prompt: "ATTEMPT b", cwd: repo, worktreeMode: "worktree" }),
			board.dispatch({ prompt: "ATTEMPT c", cwd: repo, worktreeMode: "worktree" }),
			board.dispatch({ prompt: "SLOW one", cwd: repo, worktreeMode: "worktree" }),
		]);
		for (const row of [plain, a, b, c]) expect((await waitDone(board, row.id, 180_000)).state).toBe("completed");
		await waitFor(async () => (await board.get(slow.id))?.state === "working", "slow row to work", 180_000);

		// Counts: zero, negative, fractional, absurd.
		for (const count of [0, -1, 2.5, 9, 1000]) {
			await refuses(
				board,
				repo,
				() => board.dispatchAttempts({ prompt: "ATTEMPT x", cwd: repo, count }),
				/count must be a whole number from 1 to 8/,
			);
		}
		// A repository with no commits cannot hold worktrees.
		await refuses(
			board,
			repo,
			() => board.dispatchAttempts({ prompt: "ATTEMPT x", cwd: empty, count: 2 }),
			/needs a commit to branch from: repository .*empty has no commits yet/,
		);
		await refuses(
			board,
			repo,
			() => board.dispatchAttempts({ prompt: "ATTEMPT x", cwd: empty, worktreeMode: "worktree" }),
			/has no commits yet/,
		);
		await refuses(
			board,
			repo,
			() => board.dispatchAttempts({ prompt: "ATTEMPT x", cwd: agent.cwd, count: 2 }),
			/an attempt set .* needs a git repository: .* is not inside one/,
		);

		// Merge: no worktree, still working, unknown row.
		await refuses(
			board,
			repo,
			() => board.merge(plain.id, { commit: true }),
			new RegExp(`row ${plain.id} has no worktree`),
		);
		await refuses(
			board,
			repo,
			() => board.merge(slow.id, { commit: true }),
			new RegExp(`row ${slow.id} is still working`),
		);
		await refuses(board, repo, () => board.merge("nosuchrow", { commit: true }), /no such row: nosuchrow/);
		await refuses(board, repo, () => board.fork(slow.id, { count: 2 }), /still working/);
		await refuses(board, repo, () => board.fork(a.id, { count: 0 }), /count must be/);
		await refuses(board, repo, () => board.compareDiff(plain.id, a.id), /has no worktree to compare/);
		writeFileSync(release, "go");
		await waitDone(board, slow.id, 180_000);

		// Detached HEAD in the main checkout.
		git(repo, "checkout", "-q", "--detach");
		await refuses(
			board,
			repo,
			() => board.merge(a.id, { commit: true }),
			/detached HEAD; check out the branch to merge into first/,
		);
		git(repo, "checkout", "-q", "main");

		// The row's branch removed (worktree too), then a row whose worktree alone was removed.
		git(repo, "worktree", "remove", "--force", b.worktreePath ?? "");
		git(repo, "branch", "-D", `agent-board/${b.id}`);
		await refuses(
			board,
			repo,
			() => board.merge(b.id, { commit: true }),
			new RegExp(`branch agent-board/${b.id} of row ${b.id} was removed`),
		);
		await board.removeWorktree(c.id, { force: true });
		await refuses(
			board,
			repo,
			() => board.merge(c.id, { commit: true }),
			new RegExp(`the worktree of row ${c.id}.* was removed`),
		);

		// The current branch of the main checkout has no commits yet (an orphan branch).
		git(repo, "checkout", "-q", "--orphan", "fresh");
		git(repo, "rm", "-q", "-r", "--cached", ".");
		await refuses(board, repo, () => board.merge(a.id, { commit: true }), /has no commits/);
		git(repo, "checkout", "-q", "-f", "main");

		// Headless: the same errors exit 1 on stderr, and nothing is dispatched.
		const store = board.storeDir;
		const before = (await board.list({ includeArchived: true })).length;
		// (Parse-level cases are in attempts-unit.test.ts; these two cover both error paths end to end.)
		for (const command of ["dispatch --count 0 hi", `merge ${plain.id}`]) {
			const result = await runPi(agent, {
				args: ["-p", `/agent-board ${command}`],
				cwd: repo,
				env: { AGENT_BOARD_DIR: store },
				timeoutMs: 180_000,
			});
			expect(result.code, command).toBe(1);
			expect(result.stderr.trim(), command).not.toBe("");
			expect(result.stdout, command).toBe("");
		}
		expect((await board.list({ includeArchived: true })).length).toBe(before);
		expect(snapshot(repo).files["shared.txt"]).toBe(Buffer.from("base\n").toString("base64"));
	}, 600_000);
});
