/**
 * Attempts in the dashboard, end to end: real interactive pi in tmux, the real engine and workers in
 * a temporary git repository. Dispatch three attempts from the form, compare them, diff two, merge
 * one, and see the conflicting second merge refused with the main checkout left as it was.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createBoardService } from "../src/board/service.ts";
import { git, initRepo, snapshot } from "../test-support/git-repo.ts";
import { createTestAgent, type TestAgent } from "../test-support/pi-harness.ts";
import { startPiInTmux, type TmuxSession } from "../test-support/tmux.ts";

let agent: TestAgent | undefined;
let tmux: TmuxSession | undefined;
afterEach(() => {
	tmux?.kill();
	agent?.cleanup();
	tmux = undefined;
	agent = undefined;
});

// Each attempt writes its own row id into the shared file, so the attempts differ and overlap.
const WRITE = `printf 'attempt %s\\n' "$AGENT_BOARD_ROW" > shared.txt && printf 'mine\\n' > "own-$AGENT_BOARD_ROW.txt"`;

describe("attempts in the dashboard", () => {
	it("dispatches three attempts from the form, compares and diffs them, merges one and refuses the conflicting second", async () => {
		const a = createTestAgent({
			script: { rules: [{ match: "ATTEMPT", steps: [{ toolCall: { name: "bash", args: { command: WRITE } } }, { text: "Wrote my attempt." }] }], fallback: [{ text: "ok" }] },
		});
		agent = a;
		const repo = initRepo(join(a.root, "repo"), { "shared.txt": "base\n", "README.md": "# project\n" });
		const t = startPiInTmux(a, { width: 160, height: 44, cwd: repo });
		tmux = t;
		await t.waitForText(/faux-1/);
		t.type("/agent-board");
		t.keys("Enter");
		await t.waitForText("Agent board");

		t.keys("n");
		await t.waitForText("New agent");
		t.type("ATTEMPT: rewrite shared.txt");
		t.keys("Enter");
		await t.waitForText("press enter to start");
		// name, cwd, model, thinking, worktree, attempts: 1 -> 2 -> 3
		t.keys("Down", "Down", "Down", "Down", "Down", "Enter", "Enter");
		await t.waitForText(/attempts\s+3/);
		t.keys("Down", "Enter");
		await t.waitForText("dispatched 3 attempts of ATTEMPT: rewrite shared.txt");
		await t.waitForText(/Completed \(3\)/, 60_000);

		const service = createBoardService({ storeDir: join(a.agentDir, "agent-board"), env: a.env });
		const rows = (await service.list()).sort((x, y) => (x.attempt?.index ?? 0) - (y.attempt?.index ?? 0));
		expect(rows.map((row) => row.attempt?.index)).toEqual([1, 2, 3]);
		const [r1, r2] = rows.map((row) => row.id) as [string, string];

		t.keys("c");
		await t.waitForText(/3 attempts · 3 overlapping[\s\S]*overlap: shared\.txt/);
		// Final diff stats arrive right after each run ends (untracked files count).
		await t.waitForText(/#1\s+\+ completed\s+\+2 -1 2f\s+!overlap/);
		// Select #1, mark it, then #2: the diff viewer shows #1 against #2.
		for (let i = 0; i < 3; i++) t.keys("Up");
		await t.waitForText(/^>\s*#1 /m);
		t.keys("Space", "Down");
		await t.waitForText(/^ \*#1 /m);
		await t.waitForText(/^>\s*#2 /m);
		t.keys("d");
		await t.waitForText(new RegExp(`Diff: #1 ${r1} vs #2 ${r2}[\\s\\S]*\\+1 attempt ${r2}`));
		t.keys("Escape");
		await t.waitForText(/3 attempts · 3 overlapping/);

		// Merge #2: the plan first, then the merge; its content lands in the main checkout.
		t.keys("m");
		await t.waitForText(new RegExp(`\\(y/n\\) Merge .*\\(agent-board/${r2}\\) into main: 2 files, after committing its 2 uncommitted changes`));
		t.keys("y");
		await t.waitForText(new RegExp(`merged ATTEMPT: rewrite shared\\.txt \\[2/3\\] into main: [0-9a-f]{12}`));
		await t.waitForText("Merged. Remove its worktree");
		t.keys("n");
		await t.waitForText(/1 merged/);
		await t.waitForText(/#2\s+merged → main/);
		expect(readFileSync(join(repo, "shared.txt"), "utf8")).toBe(`attempt ${r2}\n`);
		expect(readFileSync(join(repo, `own-${r2}.txt`), "utf8")).toBe("mine\n");

		// Merge #1 now conflicts on shared.txt: nothing changes, and a follow-up to the row is offered.
		const before = snapshot(repo);
		t.keys("Up", "m");
		await t.waitForText(new RegExp(`\\(y/n\\) Merge .*\\(agent-board/${r1}\\) into main`));
		t.keys("y");
		const conflict = await t.waitForText(/merge conflict in shared\.txt; the main checkout is unchanged/);
		expect(conflict).toMatch(/Reply to ATTEMPT: rewrite shared\.txt \[1\/3\]/);
		expect(snapshot(repo)).toEqual(before);
		expect(git(repo, "status", "--porcelain")).toBe("");
		t.keys("Escape");
		await t.waitForText(/Completed \(3\)/);

		// Merged state is the engine's: a new pi shows the row as merged.
		t.kill();
		const again = startPiInTmux(a, { width: 160, height: 44, cwd: repo });
		tmux = again;
		await again.waitForText(/faux-1/);
		again.type("/agent-board");
		again.keys("Enter");
		await again.waitForText(/\[merged → main\] Wrote my attempt\./);
		expect((await service.get(r2))?.merged?.into).toBe("main");
	});
});
