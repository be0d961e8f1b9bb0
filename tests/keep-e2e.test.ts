/**
 * `/agent-board keep <id>` end to end (#28 item 3): three attempts by real pi workers in a temporary
 * git repository; the dry run changes nothing; keep merges the chosen one and clears the others, whose
 * uncommitted work is refused until --force; afterwards no attempt of the set overlaps another.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { git, initRepo, snapshot } from "../test-support/git-repo.ts";
import { createTestAgent, runPi, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

const WRITE = `printf 'attempt %s\\n' "$AGENT_BOARD_ROW" > shared.txt && printf 'mine\\n' > "own-$AGENT_BOARD_ROW.txt"`;

describe("keep this one", () => {
	it("merges the chosen attempt, archives the others and removes their worktrees, refusing uncommitted work until forced", async () => {
		const agent = createTestAgent({
			script: {
				rules: [
					{
						match: "ATTEMPT",
						steps: [{ toolCall: { name: "bash", args: { command: WRITE } } }, { text: "Wrote my attempt." }],
					},
				],
				fallback: [{ text: "ok" }],
			},
		});
		agents.push(agent);
		const repo = initRepo(join(agent.root, "repo"), { "shared.txt": "base\n", "README.md": "# project\n" });
		const store = join(agent.root, "store");
		const board = boardFor(agent);
		const headless = (command: string) =>
			runPi(agent, {
				args: ["-p", `/agent-board ${command}`],
				cwd: repo,
				env: { AGENT_BOARD_DIR: store },
				timeoutMs: 180_000,
			});

		const started = await board.dispatchAttempts({ prompt: "ATTEMPT: rewrite shared.txt", cwd: repo, count: 3 });
		const [r1, r2, r3] = started.map((row) => row.id) as [string, string, string];
		for (const row of started) expect((await waitDone(board, row.id, 180_000)).state).toBe("completed");
		// Alternatives, not rivals: the three all wrote shared.txt and none is flagged.
		for (const row of await board.list()) expect(row.overlaps).toBeUndefined();

		const before = snapshot(repo);
		const plan = await headless(`keep ${r2} --dry-run`);
		expect(plan.code, plan.stderr).toBe(0);
		expect(plan.stdout).toContain(`keep #2 ${r2}`);
		expect(plan.stdout).toContain(`then archive #1 ${r1} and remove its worktree`);
		expect(plan.stdout).toMatch(/2 uncommitted change\(s\) \(.*shared\.txt.*\): its worktree stays unless --force/);
		expect(plan.stdout).toContain("(dry run: nothing was changed)");
		expect(snapshot(repo)).toEqual(before);

		// The kept attempt's own uncommitted work is committed only when asked.
		const unconfirmed = await headless(`keep ${r2}`);
		expect(unconfirmed.code).toBe(1);
		expect(unconfirmed.stderr).toContain("uncommitted changes in its worktree");
		expect(snapshot(repo)).toEqual(before);

		const kept = await headless(`keep ${r2} --commit`);
		expect(kept.code, kept.stderr).toBe(0);
		expect(kept.stdout).toContain(`merged row ${r2} into main`);
		expect(readFileSync(join(repo, "shared.txt"), "utf8")).toBe(`attempt ${r2}\n`);
		// The others hold uncommitted work: their worktrees and rows stay.
		expect(kept.stdout).toContain(`kept the worktree of ${r1}: `);
		expect(kept.stdout).toContain(`kept the worktree of ${r3}: `);
		for (const id of [r1, r3]) {
			const row = await board.get(id);
			expect(row?.archived).toBe(false);
			expect(row?.worktreePath && existsSync(row.worktreePath)).toBe(true);
		}

		const forced = await headless(`keep ${r2} --force`);
		expect(forced.code, forced.stderr).toBe(0);
		expect(forced.stdout).toContain(`${r2} was merged already`);
		expect(forced.stdout).toContain(`archived ${r1}, ${r3}; removed the worktrees of ${r1}, ${r3}`);
		const worktrees = git(repo, "worktree", "list");
		for (const id of [r1, r3]) {
			const row = await board.get(id);
			expect(row?.archived).toBe(true);
			expect(row?.worktreePath).toBeUndefined();
			expect(worktrees).not.toContain(id);
		}
		expect((await board.get(r2))?.merged?.into).toBe("main");
		expect(git(repo, "status", "--porcelain")).toBe("");
	}, 600_000);
});
