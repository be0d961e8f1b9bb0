/**
 * A run's own file that is not what it should be makes the row an error row naming the file and why:
 * a symbolic link planted as a local run's events.jsonl (to a file outside the store) while a real pi
 * run works. Nothing is read or written through it, and the row does not read "completed" as if its
 * events were there (it did, with no error).
 */
import { readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, runPi, waitFor, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

describe("a run's planted files", () => {
	it("a symlink planted as events.jsonl mid-run: the row is an error row naming the file", async () => {
		const agent = createTestAgent({});
		agents.push(agent);
		const gate = join(agent.root, "gate");
		agent.writeScript({
			rules: [{ match: "PLANTED", steps: [{ waitForFile: gate, then: { text: "Done after the plant." } }] }],
		});
		const board = boardFor(agent);
		const row = await board.dispatch({ prompt: "PLANTED answer when told", cwd: agent.cwd });
		const working = await waitFor(
			async () => {
				const read = await board.get(row.id);
				return read?.live?.waitingSince ? read : undefined;
			},
			"the row to wait for its model",
			60_000,
		);
		const runDir = String(working.runDir);
		const outside = join(agent.root, "outside-secret");
		writeFileSync(outside, "secret\n", { mode: 0o600 });
		// Swapped in whole (rename), as a planter would: the runner's open descriptor keeps the old file.
		symlinkSync(outside, join(runDir, "events.link"));
		renameSync(join(runDir, "events.link"), join(runDir, "events.jsonl"));
		writeFileSync(gate, "");

		const ended = await waitDone(board, row.id, 60_000);
		expect(ended.state).toBe("error");
		expect(ended.error).toBe("events.jsonl: is a symbolic link (not followed)");
		expect(readFileSync(outside, "utf8")).toBe("secret\n");
		// Every view says it: the list line too.
		const list = await runPi(agent, {
			args: ["-p", "/agent-board list"],
			env: { AGENT_BOARD_DIR: join(agent.root, "store") },
		});
		expect(list.stdout).toMatch(new RegExp(`^${row.id}\\s+error\\s.*events\\.jsonl: is a symbolic link`, "m"));
	}, 180_000);
});
