/** The shared change feed: fs.watch on notify/ names the rows that changed; the safety poll catches a SIGKILLed runner. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createBoardService } from "../src/board/engine/service.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, PI_CLI, waitFor, type TestAgent } from "../test-support/pi-harness.ts";
import { storeRunners } from "../test-support/proc-scan.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

describe("board change feed", () => {
	it("reports exactly the rows that changed, and a runner killed without a trace", async () => {
		const agent = createTestAgent({
			script: { rules: [{ match: "STALL", steps: [{ stall: true }] }], fallback: [{ text: "Done." }] },
		});
		agents.push(agent);
		const storeDir = join(agent.root, "store");
		const board = createBoardService({
			storeDir,
			piCommand: [process.execPath, PI_CLI],
			env: agent.env,
			safetyPollMs: 500,
		});
		const quiet = await board.dispatch({ prompt: "quiet row", cwd: agent.cwd });
		await waitDone(board, quiet.id);
		// The row is done once its end is recorded; its runner still writes the final status once more
		// and exits. Only after that is the row truly quiet.
		await waitFor(() => storeRunners(storeDir).length === 0, "the quiet row's runner to exit");
		const batches: string[][] = [];
		const unsubscribe = board.watch((ids) => batches.push([...ids]));
		try {
			const busy = await board.dispatch({ prompt: "busy row", cwd: agent.cwd });
			await waitFor(() => batches.some((ids) => ids.includes(busy.id)), "a change for the new row", 30_000);
			await waitDone(board, busy.id);
			// The quiet row never changed: no notification ever named it (the full check found nothing new).
			expect(batches.flat().filter((id) => id === quiet.id)).toEqual([]);

			const stalled = await board.dispatch({ prompt: "STALL please", cwd: agent.cwd });
			await waitFor(async () => (await board.get(stalled.id))?.live?.waitingSince, "the stalled run", 30_000);
			const seen = batches.length;
			const runner = JSON.parse(readFileSync(join(stalled.runDir!, "runner.json"), "utf8")) as { pid: number };
			process.kill(runner.pid, "SIGKILL");
			await waitFor(
				() => batches.slice(seen).some((ids) => ids.includes(stalled.id)),
				"the safety poll to notice the dead runner",
				20_000,
			);
			expect(await waitDone(board, stalled.id)).toMatchObject({ state: "failed", error: "runner died" });
		} finally {
			unsubscribe();
		}
	}, 120_000);
});
