/**
 * Targets as a person meets them in the board, in real pi under tmux with the real engine, real
 * workers and the scripted model. One pi start: with the local limit at 1 a second row waits in the
 * queue, and raising the limit to 2 in settings (S) starts it at the next pump; the new-agent form's
 * `where` picks an ssh target that points at nothing, says how it will run, refuses a cwd that is not
 * a git repository with the engine's reason, then starts the row, which shows where it runs and why it
 * cannot get there; `on:` filters to it, peek and `/agent-board show` print its target.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { initRepo } from "../test-support/git-repo.ts";
import { waitFor } from "../test-support/pi-harness.ts";
import type { TmuxSession } from "../test-support/tmux.ts";
import { boardOf, clearFilter, only, openBoard, useBoardTmux } from "../test-support/tmux-board.ts";

const tb = useBoardTmux();

/** One key, then wait for what it shows: a person looks before pressing the next one. */
async function press(t: TmuxSession, key: string, shows: string | RegExp): Promise<void> {
	t.keys(key);
	await t.waitForText(shows);
}

describe("targets in the board (tmux)", () => {
	it("a higher local limit in S starts the queued run; where picks a target, refuses a non-git cwd, and the row says where it runs", async (ctx) => {
		const agent = tb.agent();
		const gate = join(agent.root, "gate");
		initRepo(agent.cwd, { "README.md": "hi\n" });
		agent.writeScript({
			rules: [
				{
					match: "hold",
					steps: [
						{ toolCall: { name: "bash", args: { command: `while [ ! -f ${gate} ]; do sleep 0.2; done` } } },
						{ text: "Released." },
					],
				},
			],
			fallback: [{ text: "ok" }],
		});
		const service = boardOf(agent);
		await service.targets.setLimit("local", 1);
		// Port 1 on loopback: nothing listens, ssh is refused at once.
		await service.targets.add("far", { kind: "ssh", host: "ssh://nobody@127.0.0.1:1" });
		const first = await service.dispatch({ prompt: "hold one", cwd: agent.cwd });
		const second = await service.dispatch({ prompt: "hold two", cwd: agent.cwd });
		await waitFor(async () => (await service.get(first.id))?.state === "working", "the first row to work");
		expect((await service.get(second.id))?.state).toBe("queued");

		const t = await tb.start(ctx, agent, { width: 200, height: 40 });
		await openBoard(t);
		await t.waitForText("Queued (1)");
		await press(t, "S", /local: runs at a time\s+1/);
		expect(t.screen()).toMatch(/far: runs at a time\s+4/);
		// strip, notices, OS notifications, then local.
		for (const key of ["Down", "Down", "Down"]) t.keys(key);
		await press(t, "Enter", /local: runs at a time\s+2/);
		await waitFor(
			async () => (await service.get(second.id))?.alive === true,
			"the queued row to start under the new limit",
		);
		await press(t, "Escape", "Working (2)");
		await t.waitForGone("Queued (");

		// The form: where -> far, a cwd that is not a repository is refused with the engine's reason.
		const plainDir = join(agent.root, "not-a-repo");
		mkdirSync(plainDir);
		await press(t, "n", "New agent");
		t.type("remote job");
		await press(t, "C-o", "New agent: options");
		await press(t, "Down", /→ cwd/);
		await press(t, "Enter", `> ${agent.cwd}`);
		t.keys("C-u");
		t.type(plainDir);
		await press(t, "Enter", `in ${plainDir} · local`);
		await press(t, "Down", /→ where\s+local/);
		await press(t, "Enter", /→ where\s+far/);
		await t.waitForText("· on far · pi's default model · own worktree (always, on a target)");
		await press(t, "s", /not started: .*git/);
		expect(t.screen()).toContain("remote job");
		await press(t, "C-o", "New agent: options");
		await press(t, "Down", /→ cwd/);
		await press(t, "Enter", `> ${plainDir}`);
		t.keys("C-u");
		t.type(agent.cwd);
		await press(t, "Enter", `· on far · pi's default model · own worktree`);
		await press(t, "s", "dispatched remote job");
		// Its row says where it runs and why it cannot get there (ssh's own words), wherever the link got to.
		await t.waitForText(/remote job .*(unreachable since \d\d:\d\d: |ssh).* on far/, 60_000);
		expect(t.screen()).toMatch(/hold one .* on local/);

		await only(t, "on:far");
		expect(t.screen()).not.toContain("hold one");
		await press(t, "Enter", /target\s+far/);
		const remote = (await service.list()).find((row) => row.target === "far");
		expect(remote?.worktreePath).toBeTruthy();
		await press(t, "Escape", "Failed (1)");
		await clearFilter(t);
		t.keys("q");
		await t.waitForGone("Agent board");
		t.type(`/agent-board show ${remote?.id}`);
		await press(t, "Enter", /target:\s+far/);

		writeFileSync(gate, "");
		await waitFor(
			async () => (await service.get(second.id))?.state === "completed",
			"the released rows to finish",
			60_000,
		);
	});
});
