/**
 * A run's own file that is not what it should be makes the row an error row naming the file and why:
 * a symbolic link planted as a local run's events.jsonl (to a file outside the store) while a real pi
 * run works. Nothing is read or written through it, and the row does not read "completed" as if its
 * events were there (it did, with no error). Planted while the run waited in the queue, before its
 * runner opened the file: nothing appends through it (the runner did: the events went to the file
 * outside; so did its stderr, through runner.log as its pump opened it) and the run ends, before any
 * worker, naming the file.
 */
import { existsSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
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

	it.each([
		["events.jsonl", "its runner"],
		["runner.log", "the pump that starts it"],
	])(
		"a symlink planted as %s while the run waits in the queue: %s writes nothing through it and the row names the file",
		async (file) => {
			const agent = createTestAgent({});
			agents.push(agent);
			const gate = join(agent.root, "gate");
			agent.writeScript({
				rules: [{ match: "FIRST", steps: [{ waitForFile: gate, then: { text: "First done." } }] }],
				fallback: [{ text: "Second done." }],
			});
			const board = boardFor(agent, { maxConcurrent: 1 });
			const first = await board.dispatch({ prompt: "FIRST hold the only slot", cwd: agent.cwd });
			await waitFor(
				async () => (await board.get(first.id))?.live?.waitingSince !== undefined,
				"the first row to hold the slot",
				60_000,
			);
			const second = await board.dispatch({ prompt: "then run", cwd: agent.cwd });
			const queued = await board.get(second.id);
			expect(queued?.state).toBe("queued");
			const runDir = String(queued?.runDir);
			const outside = join(agent.root, "outside-secret");
			writeFileSync(outside, "secret\n", { mode: 0o600 });
			symlinkSync(outside, join(runDir, file));
			writeFileSync(gate, "");

			// The board's read says so at once (the run's files are checked at every read); what would open the
			// file (the runner, or for its log the pump that starts it) refuses it and records the run's end, before any worker.
			expect((await board.get(second.id))?.error).toBe(`${file}: is a symbolic link (not followed)`);
			const recorded = await waitFor(
				() => {
					const status = JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")) as {
						state: string;
						endedAt?: number;
						error?: string;
					};
					return status.endedAt !== undefined ? status : undefined;
				},
				"the second run's runner to record its end",
				120_000,
			);
			expect(recorded).toMatchObject({ state: "failed", error: `${file}: is a symbolic link (not followed)` });
			expect(readFileSync(outside, "utf8")).toBe("secret\n");
			const ended = await waitDone(board, second.id, 60_000);
			expect([ended.state, ended.error]).toEqual(["error", `${file}: is a symbolic link (not followed)`]);
			expect(existsSync(join(runDir, "worker.json"))).toBe(false);
			expect((await waitDone(board, first.id, 60_000)).state).toBe("completed");
		},
		240_000,
	);
});
