/**
 * `/agent-board dispatch --preset <name>` in real pi: a preset file in ~/.pi/agent/agents/ sets the
 * row's model, ponytail mode, budget and extra system text (the worker's model request shows each), and
 * another sets where it runs (a target).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { initRepo } from "../test-support/git-repo.ts";
import {
	allSystemText,
	createTestAgent,
	runPi,
	userTexts,
	waitFor,
	type TestAgent,
} from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

describe("presets", () => {
	it("dispatch --preset sets model, mode, budget and the extra system text; another preset sets the target", async () => {
		const agent = createTestAgent({
			script: { rules: [{ match: "PRESET-TASK", steps: [{ text: "Reviewed." }] }], fallback: [{ text: "ok" }] },
		});
		agents.push(agent);
		const board = boardFor(agent);
		mkdirSync(join(agent.agentDir, "agents"), { recursive: true });
		writeFileSync(
			join(agent.agentDir, "agents", "reviewer.md"),
			"---\nname: reviewer\ndescription: Reviews diffs\nmodel: faux/faux-2\nponytail: lite\nbudget: 1M\n---\n\nPRESET-SYSTEM-TEXT: you review and never edit files.\n",
		);
		writeFileSync(
			join(agent.agentDir, "agents", "remote.md"),
			"---\nname: remote\ndescription: Runs on the dev box\ntarget: dev\nmodel: faux/faux-1\nponytail: ultra\n---\n",
		);
		// A target the preset names (its host is never reached in this test: the row only has to say where it runs).
		mkdirSync(board.storeDir, { recursive: true });
		writeFileSync(
			join(board.storeDir, "config.json"),
			JSON.stringify({
				version: 1,
				targets: { dev: { kind: "ssh", host: "ssh://nobody@127.0.0.1:1", dir: ".agent-board", max: 1, env: [] } },
			}),
		);
		const env = { AGENT_BOARD_DIR: board.storeDir };

		const dispatched = await runPi(agent, {
			args: ["-p", "/agent-board dispatch --preset reviewer PRESET-TASK look at the parser"],
			env,
			timeoutMs: 60_000,
		});
		expect(dispatched.code, dispatched.stderr).toBe(0);
		const id = /dispatched (\S+)/.exec(dispatched.stdout)?.[1] ?? "";
		const done = await waitDone(board, id, 60_000);
		expect(done).toMatchObject({
			state: "completed",
			model: "faux/faux-2",
			ponytailMode: "lite",
			preset: "reviewer",
			budgetLimit: { tokens: 1_000_000 },
		});
		const [call] = agent.calls().filter((c) => userTexts(c)[0] === "PRESET-TASK look at the parser");
		expect(call?.model).toBe("faux-2");
		expect(allSystemText(call!)).toContain("PRESET-SYSTEM-TEXT: you review and never edit files.");
		expect(allSystemText(call!)).toContain("PONYTAIL MODE ACTIVE - level: lite");

		const repo = initRepo(join(agent.root, "repo"), { "README.md": "hello\n" });
		const remote = await runPi(agent, {
			args: ["-p", "/agent-board dispatch --preset remote look elsewhere"],
			cwd: repo,
			env,
			timeoutMs: 60_000,
		});
		expect(remote.code, remote.stderr).toBe(0);
		const remoteId = /dispatched (\S+)/.exec(remote.stdout)?.[1] ?? "";
		const row = await waitFor(() => board.get(remoteId), "the remote row", 30_000);
		expect(row).toMatchObject({ target: "dev", model: "faux/faux-1", ponytailMode: "ultra", preset: "remote" });
		expect(row.worktreePath).toBeTruthy();

		const unknown = await runPi(agent, {
			args: ["-p", "/agent-board dispatch --preset nobody x"],
			env,
			timeoutMs: 60_000,
		});
		expect(unknown.code).toBe(1);
		expect(unknown.stderr).toContain('no preset named "nobody" (presets: remote, reviewer;');
	}, 180_000);
});
