/**
 * `/agent-board stop` in pi says what the stop did, with a real pi worker: a working row is "stopped",
 * a row that had failed before is "already ended (failed)" (it used to print "stopped <id>: failed").
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, runPi, waitFor, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

describe("stop's words, in pi", () => {
	it("a working row: stopped; a failed row: already ended (failed)", async () => {
		const agent = createTestAgent({
			script: {
				rules: [
					{ match: "STALL", steps: [{ stall: true }] },
					{ match: "BREAK", steps: [{ error: "the model broke" }] },
				],
			},
		});
		agents.push(agent);
		const board = boardFor(agent, { stopGraceMs: 1000 });
		const stop = async (id: string) => {
			const result = await runPi(agent, {
				args: ["-p", `/agent-board stop ${id}`],
				env: { AGENT_BOARD_DIR: join(agent.root, "store") },
			});
			expect(result.code, result.stderr).toBe(0);
			return result.stdout.trim();
		};
		const broken = await board.dispatch({ prompt: "BREAK now", cwd: agent.cwd });
		expect((await waitDone(board, broken.id, 60_000)).state).toBe("failed");
		expect(await stop(broken.id)).toBe(`${broken.id}: already ended (failed)`);

		const stalled = await board.dispatch({ prompt: "STALL forever", cwd: agent.cwd });
		await waitFor(
			async () => (await board.get(stalled.id))?.live?.waitingSince,
			"the row to wait for its model",
			60_000,
		);
		expect(await stop(stalled.id)).toBe(`${stalled.id}: stopped`);
		expect((await board.get(stalled.id))?.state).toBe("stopped");
	}, 180_000);
});
