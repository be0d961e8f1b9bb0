import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { updatePolicy } from "../runner/life/policy.mjs";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { runSpends, workerPidIn } from "../test-support/budget-helpers.ts";
import type { FauxStep } from "../test-support/faux-script.ts";
import { createTestAgent, PI_CLI, runPi, userTexts, waitFor, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

const STEPS: FauxStep[] = [
	...Array.from(
		{ length: 12 },
		(_, i): FauxStep => ({
			text: `Step ${i + 1}: checking the next file before I run the command.`,
			toolCall: { name: "bash", args: { command: `echo step-${i + 1}` } },
		}),
	),
	{ text: "All steps done." },
];

async function waitPaused(board: BoardEngine, id: string, since: number): Promise<BoardRow> {
	return waitFor(
		async () => {
			const row = await board.get(id);
			return row?.state === "needs_input" && row.budget?.paused && (row.budget.spent ?? 0) > since ? row : undefined;
		},
		`row ${id} to pause on its budget`,
		90_000,
	);
}

/** This run's spend, one ledger line per turn, in order. */
const turnSpends = (storeDir: string, runId: string): number[] => runSpends(storeDir, runId).map((line) => line.tokens);

const workerPid = (row: BoardRow): number => workerPidIn(row.runDir ?? "");

describe("budgets", () => {
	it("a 2k-token budget pauses a streaming row at a turn's end; a reply and the budget command raise it and the same worker goes on", async () => {
		const agent = createTestAgent({ script: { rules: [{ match: "BUDGETED", steps: STEPS }] } });
		agents.push(agent);
		const board = boardFor(agent);
		const dispatched = await board.dispatch({
			prompt: "BUDGETED walk the files",
			cwd: agent.cwd,
			model: "faux-stream/stream-1",
			budget: { tokens: 2000 },
		});
		const paused = await waitPaused(board, dispatched.id, 0);
		expect(paused).toMatchObject({
			alive: true,
			question: "budget reached: 2k tokens; raise or stop",
			currentRunId: dispatched.currentRunId,
		});
		expect(paused.questionOptions?.[1]).toBe("stop");
		expect(paused.budget).toMatchObject({ scope: "row", unit: "tokens", limit: 2000 });
		// Paused at the end of the turn that crossed the budget: no request after it, no tool running.
		const calls = () => agent.calls().filter((call) => userTexts(call)[0] === "BUDGETED walk the files");
		const turns = turnSpends(board.storeDir, dispatched.currentRunId ?? "");
		expect(turns.length).toBe(calls().length);
		const total = turns.reduce((a, b) => a + b, 0);
		expect(total).toBeGreaterThanOrEqual(2000);
		expect(total - (turns.at(-1) ?? 0)).toBeLessThan(2000);
		expect(paused.budget?.spent).toBe(total);
		expect(paused.live?.tool).toBeUndefined();
		const pid = workerPid(paused);

		// Raised by a reply: the same worker goes on until the new budget is reached.
		const raised = await board.reply(paused.id, `raise to ${total + 1000}`);
		expect(raised.delivery).toBe("budget");
		const again = await waitPaused(board, paused.id, total);
		expect(workerPid(again)).toBe(pid);
		expect(again.currentRunId).toBe(dispatched.currentRunId);

		// Raised by the command, from another pi process.
		const command = await runPi(agent, {
			args: ["-p", `/agent-board budget ${paused.id} 1M`],
			env: { AGENT_BOARD_DIR: board.storeDir },
			timeoutMs: 60_000,
		});
		expect(command.stdout).toContain(
			`${paused.id}: this row's budget is now 1M tokens; it goes on in the same process`,
		);
		const done = await waitDone(board, paused.id, 90_000);
		expect(done).toMatchObject({
			state: "completed",
			latestAssistant: "All steps done.",
			currentRunId: dispatched.currentRunId,
		});
		expect(new Set(calls().map((call) => call.pid))).toEqual(new Set([pid]));
		expect(calls()).toHaveLength(STEPS.length);
		// The list prints spend against budget.
		const list = await runPi(agent, {
			args: ["-p", "/agent-board list"],
			env: { AGENT_BOARD_DIR: board.storeDir },
			timeoutMs: 60_000,
		});
		expect(list.stdout).toMatch(new RegExp(`${done.id}.*\\d+(\\.\\d)?k/1M tok`));
	}, 240_000);

	it("a daily budget in policy.json pauses a row of that board; raising it there resumes the same worker", async () => {
		const agent = createTestAgent({ script: { rules: [{ match: "DAILY", steps: STEPS.slice(-4) }] } });
		agents.push(agent);
		const board = createBoardService({
			storeDir: join(agent.root, "store-daily"),
			piCommand: [process.execPath, PI_CLI],
			env: agent.env,
		});
		await updatePolicy(board.storeDir, (policy) => (policy.budgets = { day: { tokens: 1000 } }));
		const row = await board.dispatch({ prompt: "DAILY chores", cwd: agent.cwd });
		const paused = await waitPaused(board, row.id, 0);
		expect(paused.question).toBe("budget reached: 1k tokens (the board's daily budget); raise or stop");
		expect(paused.budget).toMatchObject({ scope: "day", limit: 1000 });
		const pid = workerPid(paused);
		// What the settings (S) do: policy.json under its lock. The runner sees it at its next poll.
		await updatePolicy(board.storeDir, (policy) => (policy.budgets = { day: { tokens: 10_000_000 } }));
		const done = await waitDone(board, row.id, 90_000);
		expect(done.state).toBe("completed");
		expect(new Set(agent.calls().map((call) => call.pid))).toEqual(new Set([pid]));
	}, 180_000);
});
