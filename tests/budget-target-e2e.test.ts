/**
 * Budgets on a target, end to end: a real sshd on 127.0.0.1 logging into a second Unix user whose pi
 * talks to the loopback scripted model. The far runner holds each turn's end; the link runs the gate
 * against this machine's ledger and limits. A row's token budget pauses the ssh row at the end of the
 * turn that crossed it (needs input, the budget's question, no model request after it, every turn's
 * spend in the local ledger), and `/agent-board budget <row> <more>` from another pi lets the same far
 * worker go on to the end.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dayOf, spendDir } from "../runner/life/spend-ledger.mjs";
import type { BoardRow } from "../src/board/engine/types.ts";
import { rowWhere, waitDone } from "../test-support/board-helpers.ts";
import type { FauxStep } from "../test-support/faux-script.ts";
import { createTestAgent, runPi, type TestAgent } from "../test-support/pi-harness.ts";
import { requires, sshdMissing } from "../test-support/requires.ts";
import { startSshBoard, type SshBoard } from "../test-support/ssh-board.ts";

const missing = sshdMissing();
let fixture: SshBoard | undefined;
const agents: TestAgent[] = [];

beforeAll(async () => {
	if (missing) return;
	fixture = await startSshBoard("pab-budget-target-");
}, 180_000);

afterAll(async () => {
	for (const agent of agents) agent.cleanup();
	await fixture?.cleanup();
});

/** Each step is one model request of 15 tokens (the model server's usage) and one bash call. */
const steps = (tag: string, n: number): FauxStep[] => [
	...Array.from(
		{ length: n },
		(_, i): FauxStep => ({
			text: `${tag} step ${i + 1}.`,
			toolCall: { name: "bash", args: { command: `echo ${i}` } },
		}),
	),
	{ text: "All steps done." },
];

/** This run's spend in the local ledger, one line per turn, in order. */
function turnSpends(storeDir: string, runId: string): number[] {
	const text = readFileSync(join(spendDir(storeDir), `${dayOf(Date.now())}.jsonl`), "utf8");
	return text
		.split("\n")
		.filter(Boolean)
		.map((line) => JSON.parse(line) as { run: string; tokens: number; target?: string })
		.filter((line) => line.run === runId)
		.map((line) => line.tokens);
}

/** The far worker's pid, from its run's worker.json on the host. */
function farWorker(fixture: SshBoard, row: BoardRow): number {
	const runDir = join(fixture.host.user.home, ".agent-board", "store", "rows", row.id, "runs", row.currentRunId ?? "");
	return (JSON.parse(readFileSync(join(runDir, "worker.json"), "utf8")) as { pid: number }).pid;
}

describe("budgets on an ssh target", () => {
	it("a row's token budget pauses the ssh row at a turn's end; `budget <row> <more>` lets the same far worker finish", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const { board, model, repo } = fixture as SshBoard;
		const STEPS = steps("ROWBUDGET", 8);
		model.setScript({ rules: [{ match: "ROWBUDGET", steps: STEPS }] });
		const dispatched = await board.dispatch({
			prompt: "ROWBUDGET walk the files",
			cwd: repo,
			target: "h",
			budget: { tokens: 40 },
		});
		const paused = await rowWhere(
			board,
			dispatched.id,
			"the ssh row to pause on its budget",
			(row) => row.state === "needs_input" && row.budget?.paused === true,
			120_000,
		);
		expect(paused).toMatchObject({
			alive: true,
			question: "budget reached: 40 tokens; raise or stop",
			currentRunId: dispatched.currentRunId,
			target: "h",
		});
		expect(paused.questionOptions?.at(-1)).toBe("stop");
		expect(paused.budget).toMatchObject({ scope: "row", unit: "tokens", limit: 40, spent: 45 });
		// Paused at the end of the turn that crossed it: every request's spend is in the local ledger, and the
		// one that crossed was the last.
		const requests = () => model.requests().filter((request) => request.prompt.includes("ROWBUDGET"));
		const turns = turnSpends(board.storeDir, dispatched.currentRunId ?? "");
		expect(turns).toEqual([15, 15, 15]);
		expect(requests()).toHaveLength(turns.length);
		const pid = farWorker(fixture as SshBoard, paused);

		// Raised by the subcommand, from another pi process on this machine.
		const agent = createTestAgent({ script: { rules: [] } });
		agents.push(agent);
		const command = await runPi(agent, {
			args: ["-p", `/agent-board budget ${paused.id} 1M`],
			env: { AGENT_BOARD_DIR: board.storeDir },
			timeoutMs: 60_000,
		});
		expect(command.stdout).toContain(
			`${paused.id}: this row's budget is now 1M tokens; it goes on in the same process`,
		);
		const done = await waitDone(board, paused.id, 120_000);
		expect(done).toMatchObject({
			state: "completed",
			latestAssistant: "All steps done.",
			currentRunId: dispatched.currentRunId,
		});
		expect(farWorker(fixture as SshBoard, done)).toBe(pid);
		expect(requests()).toHaveLength(STEPS.length);
		expect(turnSpends(board.storeDir, dispatched.currentRunId ?? "")).toHaveLength(STEPS.length);
	}, 300_000);
});
