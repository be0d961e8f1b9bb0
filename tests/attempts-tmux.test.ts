/**
 * Attempts in the board, end to end at 80x24 and 120x40: real interactive pi in tmux, the real engine
 * and workers in a temporary git repository. Two attempts from the new-agent options, `[n/N]` in the
 * list and no overlap flagged between them (they are alternatives), a new file's diff numbered right, compare, a clean merge,
 * then the other attempt's plan that says it will conflict, and after the conflict the user is back in
 * compare with the main checkout as it was; the worktree is removed last.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { git, initRepo, snapshot } from "../test-support/git-repo.ts";
import { boardOf, only, openBoard, useBoardTmux } from "../test-support/tmux-board.ts";

const tb = useBoardTmux();

// Each attempt writes its own row id into the shared file, so the attempts differ and the second conflicts.
const WRITE = `printf 'attempt %s\\n' "$AGENT_BOARD_ROW" > shared.txt && printf 'mine\\n' > "own-$AGENT_BOARD_ROW.txt"`;

async function attempts(ctx: TestContext, width: number, height: number): Promise<void> {
	const a = tb.agent({
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
	const repo = initRepo(join(a.root, "repo"), { "shared.txt": "base\n", "README.md": "# project\n" });
	const t = await tb.start(ctx, a, { width, height, cwd: repo });
	await openBoard(t);

	// Two attempts from the options: ctrl+o, attempts 1 -> 2, then s starts from where the cursor is.
	t.keys("n");
	await t.waitForText("New agent");
	t.type("ATTEMPT: rewrite shared.txt");
	t.keys("C-o");
	await t.waitForText("s starts the agent from anywhere in this list");
	// name, cwd, where, model, thinking, worktree, then attempts.
	t.keys("Down", "Down", "Down", "Down", "Down", "Down", "Enter");
	await t.waitForText(/attempts\s+2/);
	t.keys("s");
	await t.waitForText("dispatched 2 attempts of ATTEMPT: rewrite shared.txt");
	await t.waitForText(/Completed \(2\)/, 90_000);
	const service = boardOf(a);
	const rows = (await service.list()).sort((x, y) => (x.attempt?.index ?? 0) - (y.attempt?.index ?? 0));
	const [r1, r2] = rows.map((row) => row.id) as [string, string];

	// The list tells the attempts apart; both rewrote shared.txt, yet as alternatives of one set they are not
	// flagged as overlapping each other.
	let screen = await t.waitForText(
		/ATTEMPT: rewrite shared\.txt \[1\/2\][\s\S]*ATTEMPT: rewrite shared\.txt \[2\/2\]|ATTEMPT: rewrite shared\.txt \[2\/2\][\s\S]*ATTEMPT: rewrite shared\.txt \[1\/2\]/,
		30_000,
	);
	if (width >= 120) screen = await t.waitForText(/\[1\/2\].*\+2 -1 2f/, 30_000);
	expect(screen).not.toContain("[overlap:");

	// A new file in the diff: its lines numbered from 1, nothing eaten.
	await only(t, "[1/2]");
	t.keys("d");
	screen = await t.waitForText(/Diff: ATTEMPT[\s\S]*\+1 mine/);
	expect(screen).toMatch(/\+1 attempt /);
	expect(screen).not.toMatch(/\d+ ew untracked/);
	t.keys("Escape");
	// Back on the list before the next key: an Escape and a key typed at once read as alt+key.
	await t.waitForText(/Completed \(\d+\)/);

	// Compare; merge #1 (clean): plan, y, merged, keep the worktree for now.
	t.keys("c");
	screen = await t.waitForText(/Attempt set \S+ 2 attempts/);
	expect(screen).not.toContain("overlapping");
	t.keys("Up", "Up");
	await t.waitForText(/^>\s*#1 /m);
	t.keys("m");
	screen = await t.waitForText(new RegExp(`\\(y/n\\) Merge .*\\(agent-board/${r1}\\)`));
	expect(screen).not.toContain("will conflict");
	t.keys("y");
	await t.waitForText(/merged ATTEMPT: rewrite shared\.txt \[1\/2\] into main: [0-9a-f]{12}/, 30_000);
	await t.waitForText("Merged. Remove its worktree");
	t.keys("n");
	await t.waitForText(/#1\s+merged → main/);
	expect(readFileSync(join(repo, "shared.txt"), "utf8")).toBe(`attempt ${r1}\n`);

	// #2 now conflicts: the plan says so before y; after the conflict nothing changed and we are back in compare.
	const before = snapshot(repo);
	t.keys("Down", "m");
	screen = await t.waitForText(
		new RegExp(`\\(y/n\\) Merge .*\\(agent-board/${r2}\\)[\\s\\S]*will conflict in shared\\.txt`),
		30_000,
	);
	t.keys("y");
	await t.waitForText(/merge conflict in shared\.txt; the main checkout is unchanged/, 30_000);
	await t.waitForText(/Reply to ATTEMPT: rewrite shared\.txt \[2\/2\]/);
	expect(snapshot(repo)).toEqual(before);
	expect(git(repo, "status", "--porcelain")).toBe("");
	t.keys("Escape");
	await t.waitForText(/2 attempts · 1 merged/);

	// The merged attempt's worktree goes (git may ask to force).
	t.keys("Escape");
	await t.waitForText(/Completed \(1\)\n>.*\[1\/2\]/);
	t.keys("w");
	await t.waitForText("Remove worktree");
	t.keys("y");
	const outcome = await t.waitForText(/Force-remove the worktree|removed worktree of ATTEMPT/, 30_000);
	if (/Force-remove the worktree/.test(outcome)) t.keys("y");
	await t.waitForText(/removed worktree of ATTEMPT/, 30_000);
	expect(git(repo, "worktree", "list")).not.toContain(r1);
}

describe("attempts in the board, in real pi", { timeout: 300_000 }, () => {
	it("at 80x24", async (ctx) => {
		await attempts(ctx, 80, 24);
	});

	it("at 120x40", async (ctx) => {
		await attempts(ctx, 120, 40);
	});
});
