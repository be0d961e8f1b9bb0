/**
 * Budgets on a target, end to end: a real sshd on 127.0.0.1 logging into a second Unix user whose pi
 * talks to the loopback scripted model. The far runner holds each turn's end; the link runs the gate
 * against this machine's ledger and limits. A row's token budget pauses the ssh row at the end of the
 * turn that crossed it (needs input, the budget's question, no model request after it, every turn's
 * spend in the local ledger), and `/agent-board budget <row> <more>` from another pi lets the same far
 * worker go on to the end. The target's daily budget (policy.json) pauses a row there naming the target,
 * and a pool's (of one member, the same host) a row it placed, naming the pool; each raise is written
 * where that limit lives and the same far worker finishes. The board's daily budget, an attempt set's and
 * a `$` budget (the host's model priced) hold rows on the target the same way.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readPolicy, updatePolicy } from "../runner/life/policy.mjs";
import type { BoardRow } from "../src/board/engine/types.ts";
import { rowWhere, waitDone } from "../test-support/board-helpers.ts";
import { budgetSteps, ledger, runSpends, spentToday, workerPidIn } from "../test-support/budget-helpers.ts";
import { createTestAgent, runPi, type TestAgent, waitFor } from "../test-support/pi-harness.ts";
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

/** This run's spend in the local ledger, one line per turn, in order. */
const turnSpends = (storeDir: string, runId: string): number[] => runSpends(storeDir, runId).map((line) => line.tokens);

/** The far worker's pid, from its run's worker.json on the host. */
const farWorker = (fixture: SshBoard, row: BoardRow): number =>
	workerPidIn(join(fixture.host.user.home, ".agent-board", "store", "rows", row.id, "runs", row.currentRunId ?? ""));

describe("budgets on an ssh target", () => {
	it("a row's token budget pauses the ssh row at a turn's end; `budget <row> <more>` lets the same far worker finish", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const { board, model, repo } = fixture as SshBoard;
		const STEPS = budgetSteps("ROWBUDGET", 8);
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

	it("a target's daily budget pauses a row there, naming the target; its raise lets the same far worker finish", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const { board, model, repo } = fixture as SshBoard;
		const STEPS = budgetSteps("DAYBUDGET", 5);
		model.setScript({ rules: [{ match: "DAYBUDGET", steps: STEPS }] });
		// What the earlier test spent on h today counts: the limit is 40 tokens past it.
		const limit = spentToday(board.storeDir, (line) => line.target === "h") + 40;
		await updatePolicy(board.storeDir, (policy) => (policy.budgets = { targets: { h: { tokens: limit } } }));
		const dispatched = await board.dispatch({ prompt: "DAYBUDGET chores", cwd: repo, target: "h" });
		const paused = await rowWhere(
			board,
			dispatched.id,
			"the ssh row to pause on h's daily budget",
			(row) => row.state === "needs_input" && row.budget?.paused === true,
			120_000,
		);
		expect(paused.question).toBe(`budget reached: ${limit} tokens (h's daily budget); raise or stop`);
		expect(paused.budget).toMatchObject({ scope: "target", target: "h", limit, spent: limit + 5 });
		const requests = () => model.requests().filter((request) => request.prompt.includes("DAYBUDGET"));
		expect(turnSpends(board.storeDir, dispatched.currentRunId ?? "")).toEqual([15, 15, 15]);
		expect(requests()).toHaveLength(3);
		const pid = farWorker(fixture as SshBoard, paused);
		// What `/agent-board budget` and a reply do: the raise goes where the limit that paused it lives.
		const raised = await board.budget?.(paused.id, { tokens: 1_000_000 });
		expect(raised).toMatchObject({ scope: "target", outcome: "resumed" });
		expect(readPolicy(board.storeDir).policy.budgets?.targets?.h).toEqual({ tokens: 1_000_000 });
		const done = await waitDone(board, paused.id, 120_000);
		expect(done).toMatchObject({ state: "completed", currentRunId: dispatched.currentRunId });
		expect(farWorker(fixture as SshBoard, done)).toBe(pid);
		expect(requests()).toHaveLength(STEPS.length);
	}, 300_000);

	it("a pool's daily budget pauses a row it placed, naming the pool; its raise lets the same far worker finish", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const { board, model, repo } = fixture as SshBoard;
		await board.targets.add("p", { kind: "pool", members: "h" });
		const STEPS = budgetSteps("POOLBUDGET", 5);
		model.setScript({ rules: [{ match: "POOLBUDGET", steps: STEPS }] });
		await updatePolicy(board.storeDir, (policy) => {
			policy.budgets = { targets: { h: { tokens: 1_000_000 }, p: { tokens: 40 } } };
		});
		const dispatched = await board.dispatch({ prompt: "POOLBUDGET chores", cwd: repo, target: "p" });
		const paused = await rowWhere(
			board,
			dispatched.id,
			"the pool's row to pause on p's daily budget",
			(row) => row.state === "needs_input" && row.budget?.paused === true,
			120_000,
		);
		expect(paused).toMatchObject({ target: "p", host: "h" });
		expect(paused.question).toBe("budget reached: 40 tokens (p's daily budget); raise or stop");
		expect(paused.budget).toMatchObject({ scope: "target", target: "p", limit: 40, spent: 45 });
		const run = dispatched.currentRunId ?? "";
		expect(ledger(board.storeDir).filter((line) => line.run === run)).toEqual(
			Array.from({ length: 3 }, () => expect.objectContaining({ target: "h", pool: "p", tokens: 15 })),
		);
		const pid = farWorker(fixture as SshBoard, paused);
		const raised = await board.budget?.(paused.id, { tokens: 1000 });
		expect(raised).toMatchObject({ scope: "target", outcome: "resumed" });
		expect(readPolicy(board.storeDir).policy.budgets?.targets).toEqual({
			h: { tokens: 1_000_000 },
			p: { tokens: 1000 },
		});
		const done = await waitDone(board, paused.id, 120_000);
		expect(done).toMatchObject({ state: "completed", currentRunId: dispatched.currentRunId });
		expect(farWorker(fixture as SshBoard, done)).toBe(pid);
	}, 300_000);

	it("the board's daily budget pauses a row on the target; raised in policy.json, the same far worker finishes", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const { board, model, repo } = fixture as SshBoard;
		const STEPS = budgetSteps("BOARDDAY", 5);
		model.setScript({ rules: [{ match: "BOARDDAY", steps: STEPS }] });
		const limit = spentToday(board.storeDir, () => true) + 40;
		await updatePolicy(board.storeDir, (policy) => (policy.budgets = { day: { tokens: limit } }));
		const dispatched = await board.dispatch({ prompt: "BOARDDAY chores", cwd: repo, target: "h" });
		const paused = await rowWhere(
			board,
			dispatched.id,
			"the ssh row to pause on the board's daily budget",
			(row) => row.state === "needs_input" && row.budget?.paused === true,
			120_000,
		);
		expect(paused.question).toBe(`budget reached: ${limit} tokens (the board's daily budget); raise or stop`);
		expect(paused.budget).toMatchObject({ scope: "day", limit, spent: limit + 5 });
		const pid = farWorker(fixture as SshBoard, paused);
		// What the settings (S) write: policy.json under its lock; the link's gate sees it at its next poll.
		await updatePolicy(board.storeDir, (policy) => (policy.budgets = {}));
		const done = await waitDone(board, paused.id, 120_000);
		expect(done).toMatchObject({ state: "completed", currentRunId: dispatched.currentRunId });
		expect(farWorker(fixture as SshBoard, done)).toBe(pid);
		expect(model.requests().filter((request) => request.prompt.includes("BOARDDAY"))).toHaveLength(STEPS.length);
	}, 300_000);

	it("an attempt set's budget pauses its rows on the target; raised once, every row of the set finishes", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const { board, model, repo } = fixture as SshBoard;
		const STEPS = budgetSteps("SETBUDGET", 4);
		model.setScript({ rules: [{ match: "SETBUDGET", steps: STEPS }] });
		const rows = await board.dispatchAttempts({
			prompt: "SETBUDGET chores",
			cwd: repo,
			target: "h",
			count: 2,
			setBudget: { tokens: 40 },
		});
		expect(rows).toHaveLength(2);
		const paused = await waitFor(
			async () => {
				for (const { id } of rows) {
					const row = await board.get(id);
					if (row?.state === "needs_input" && row.budget?.paused) return row;
				}
				return undefined;
			},
			"a row of the set to pause on the set's budget",
			120_000,
		);
		expect(paused.question).toBe("budget reached: 40 tokens (the attempt set's budget); raise or stop");
		expect(paused.budget).toMatchObject({ scope: "set", limit: 40 });
		const setId = paused.attempt?.setId;
		expect(setId).toBeDefined();
		// The set's spend, from this machine's ledger, crossed 40 with the request that paused it.
		expect(spentToday(board.storeDir, (line) => line.set === setId)).toBeGreaterThanOrEqual(40);
		const raised = await board.budget?.(paused.id, { tokens: 1_000_000 });
		expect(raised).toMatchObject({ scope: "set", outcome: "resumed" });
		for (const { id } of rows) expect(await waitDone(board, id, 180_000)).toMatchObject({ state: "completed" });
	}, 400_000);

	it("a $ budget pauses the ssh row at the turn whose cost crossed it; its raise lets the same far worker finish", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const { board, model, repo, host } = fixture as SshBoard;
		// The host's pi prices the model: $1,000 per million tokens in and out, so each 15-token request costs $0.015.
		const models = model.modelsJson() as { providers: Record<string, { models: { cost: object }[] }> };
		for (const provider of Object.values(models.providers))
			for (const entry of provider.models) entry.cost = { input: 1000, output: 1000, cacheRead: 0, cacheWrite: 0 };
		host.user.writePiConfig({ models });
		try {
			const STEPS = budgetSteps("COSTBUDGET", 5);
			model.setScript({ rules: [{ match: "COSTBUDGET", steps: STEPS }] });
			const dispatched = await board.dispatch({
				prompt: "COSTBUDGET chores",
				cwd: repo,
				target: "h",
				budget: { cost: 0.04 },
			});
			const paused = await rowWhere(
				board,
				dispatched.id,
				"the ssh row to pause on its $ budget",
				(row) => row.state === "needs_input" && row.budget?.paused === true,
				120_000,
			);
			expect(paused.question).toBe("budget reached: $0.04; raise or stop");
			expect(paused.budget).toMatchObject({ scope: "row", unit: "cost", limit: 0.04 });
			expect(paused.budget?.spent).toBeCloseTo(0.045, 6);
			const requests = () => model.requests().filter((request) => request.prompt.includes("COSTBUDGET"));
			expect(requests()).toHaveLength(3);
			const pid = farWorker(fixture as SshBoard, paused);
			const raised = await board.budget?.(paused.id, { cost: 1 });
			expect(raised).toMatchObject({ scope: "row", outcome: "resumed" });
			const done = await waitDone(board, paused.id, 120_000);
			expect(done).toMatchObject({ state: "completed", currentRunId: dispatched.currentRunId });
			expect(farWorker(fixture as SshBoard, done)).toBe(pid);
			expect(requests()).toHaveLength(STEPS.length);
		} finally {
			host.user.writePiConfig({ models: model.modelsJson() });
		}
	}, 300_000);
});
