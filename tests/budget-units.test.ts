/**
 * Budgets without pi: amounts, the check a runner makes at each turn's end, the spend ledger, policy.json,
 * the worker's held turn ends and the supervisor's answer that only answers its own question.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BudgetGate } from "../runner/life/budget-gate.mjs";
import { initialStatus } from "../runner/life/state-rules.mjs";
import {
	crossedLimit,
	formatLimit,
	nearestLimit,
	parseAmount,
	parseBudgetReply,
	pauseQuestion,
} from "../runner/life/budget.mjs";
import { policyPath, readPolicy, updatePolicy } from "../runner/life/policy.mjs";
import { appendSpend, dayOf, SpendLedger, spendDir } from "../runner/life/spend-ledger.mjs";
import { parseRunnerLine, parseWorkerLine, type WorkerToRunner } from "../runner/protocol.mjs";
import { WorkerControl } from "../src/board/worker/control-state.ts";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});
const scratch = (): string => {
	const dir = mkdtempSync(join(tmpdir(), "pab-budget-"));
	dirs.push(dir);
	return dir;
};

describe("amounts and limits", () => {
	it("reads tokens and cost the way people write them", () => {
		expect(parseAmount("50k")).toEqual({ tokens: 50_000 });
		expect(parseAmount("2000")).toEqual({ tokens: 2000 });
		expect(parseAmount("1.5M tokens")).toEqual({ tokens: 1_500_000 });
		expect(parseAmount("$2")).toEqual({ cost: 2 });
		expect(parseAmount("2.5 usd")).toEqual({ cost: 2.5 });
		expect(parseAmount("0")).toBeUndefined();
		expect(parseAmount("lots")).toBeUndefined();
		expect(formatLimit({ tokens: 50_000, cost: 2 })).toBe("50k tokens or $2.00");
	});

	it("crosses the most specific limit first and offers a raise", () => {
		const spends = { row: { tokens: 2100, cost: 0 }, day: { tokens: 90_000, cost: 0 } };
		expect(crossedLimit(spends, { row: { tokens: 5000 }, day: { tokens: 100_000 } })).toBeUndefined();
		const crossed = crossedLimit(spends, { row: { tokens: 2000 }, day: { tokens: 50_000 } });
		expect(crossed).toEqual({ scope: "row", unit: "tokens", limit: 2000, spent: 2100 });
		expect(pauseQuestion(crossed!)).toEqual({
			question: "budget reached: 2k tokens; raise or stop",
			options: ["raise to 4k", "stop"],
		});
		expect(pauseQuestion({ scope: "day", unit: "cost", limit: 5, spent: 5.2 }).question).toBe(
			"budget reached: $5.00 (the board's daily budget); raise or stop",
		);
		expect(nearestLimit(spends, { row: { tokens: 10_000 }, day: { tokens: 100_000 } })).toEqual({
			scope: "day",
			unit: "tokens",
			limit: 100_000,
			spent: 90_000,
		});
	});

	it("reads a reply to a paused row", () => {
		expect(parseBudgetReply("raise to 4k")).toEqual({ raise: { tokens: 4000 } });
		expect(parseBudgetReply("$3")).toEqual({ raise: { cost: 3 } });
		expect(parseBudgetReply("Stop")).toEqual({ stop: true });
		expect(parseBudgetReply("please keep going")).toBeUndefined();
	});
});

describe("the spend ledger and policy.json", () => {
	it("sums a day's lines by set and target, reading only what was appended since", () => {
		const store = scratch();
		const now = Date.now();
		appendSpend(store, { at: now, row: "a", run: "r1", set: "set-1", tokens: 100, cost: 0.1 });
		appendSpend(store, { at: now, row: "b", run: "r2", target: "dev", tokens: 50, cost: 0 });
		const ledger = new SpendLedger(store);
		expect(ledger.sum(() => true, now, now)).toEqual({ tokens: 150, cost: 0.1 });
		// A torn line and a foreign one are skipped; a later append is read.
		appendFileSync(join(spendDir(store), `${dayOf(now)}.jsonl`), '{"row":"x","tokens":\n["junk"]\n');
		appendSpend(store, { at: now, row: "c", run: "r3", set: "set-1", tokens: 7, cost: 0 });
		expect(ledger.sum((line) => line.set === "set-1", now, now)).toEqual({ tokens: 107, cost: 0.1 });
		expect(ledger.sum((line) => (line.target ?? "local") === "dev", now, now)).toEqual({ tokens: 50, cost: 0 });
	});

	it("keeps the supervisor off and no budget while policy.json is missing or wrong, and changes it under its lock", async () => {
		const store = scratch();
		expect(readPolicy(store)).toEqual({ policy: { version: 1 } });
		await updatePolicy(store, (policy) => {
			policy.supervisor = { model: "faux/faux-1" };
			policy.budgets = { day: { tokens: 100_000 } };
		});
		expect(readPolicy(store).policy).toEqual({
			version: 1,
			supervisor: { model: "faux/faux-1" },
			budgets: { day: { tokens: 100_000 } },
		});
		writeFileSync(policyPath(store), JSON.stringify({ version: 1, budgets: { day: { tokens: -1 } } }));
		expect(readPolicy(store)).toEqual({
			policy: { version: 1 },
			error: `${policyPath(store)}: /budgets/day /tokens must be a number > 0`,
		});
		await expect(updatePolicy(store, () => undefined)).rejects.toThrow("/budgets/day /tokens must be a number > 0");
	});
});

function worker() {
	const sent: WorkerToRunner[] = [];
	let aborts = 0;
	const control = new WorkerControl({
		send: (message) => sent.push(message),
		deliver: () => undefined,
		abort: () => {
			aborts += 1;
			return true;
		},
		isIdle: () => false,
		hold: () => () => undefined,
	});
	return { control, sent, aborts: () => aborts };
}

describe("the worker's side", () => {
	it("parses the new lines and drops malformed ones", () => {
		expect(parseRunnerLine('{"type":"go","id":"turn-1"}')).toEqual({ type: "go", id: "turn-1" });
		expect(parseRunnerLine('{"type":"prompt","text":"x","holdTurns":true,"system":"be brief"}')).toEqual({
			type: "prompt",
			text: "x",
			holdTurns: true,
			system: "be brief",
		});
		expect(parseRunnerLine('{"type":"message","id":"m","text":"y","deliverAs":"steer","answers":"call-1"}')).toEqual({
			type: "message",
			id: "m",
			text: "y",
			deliverAs: "steer",
			answers: "call-1",
		});
		expect(parseWorkerLine('{"type":"turn-end","id":"turn-1","usage":{"tokens":12,"cost":-3},"more":true}')).toEqual({
			type: "turn-end",
			id: "turn-1",
			usage: { tokens: 12, cost: 0 },
			more: true,
		});
		expect(parseWorkerLine('{"type":"turn-end","usage":{}}')).toBeUndefined();
	});

	it("holds a turn's end only when the runner asked, until go; a stop lets it go at once", async () => {
		const plain = worker();
		plain.control.onLine({ type: "prompt", text: "task" });
		await expect(plain.control.holdTurn({ tokens: 1, cost: 0 }, true).outcome).resolves.toBe("go");
		expect(plain.sent).toEqual([]);

		const held = worker();
		held.control.onLine({ type: "prompt", text: "task", holdTurns: true, system: "extra" });
		expect(held.control.system).toBe("extra");
		const first = held.control.holdTurn({ tokens: 10, cost: 0 }, true);
		expect(held.sent).toEqual([{ type: "turn-end", id: "turn-1", usage: { tokens: 10, cost: 0 }, more: true }]);
		let settled = "";
		void first.outcome.then((value) => (settled = value));
		held.control.onLine({ type: "go", id: "turn-9" });
		await Promise.resolve();
		expect(settled).toBe("");
		held.control.onLine({ type: "go", id: "turn-1" });
		await expect(first.outcome).resolves.toBe("go");

		const second = held.control.holdTurn({ tokens: 20, cost: 0 }, true);
		held.control.onLine({ type: "abort" });
		await expect(second.outcome).resolves.toBe("abort");
		const third = worker();
		third.control.onLine({ type: "prompt", text: "task", holdTurns: true });
		third.control.onAgentStart();
		const parked = third.control.holdTurn({ tokens: 1, cost: 0 }, true);
		parked.park();
		await expect(parked.outcome).resolves.toBe("park");
		expect(third.aborts()).toBe(1);
	});

	it("an answer for one ask_user call goes to it only; a question already answered rejects it", async () => {
		const { control, sent } = worker();
		control.onLine({ type: "prompt", text: "task" });
		control.onAgentStart();
		const ask = control.waitForAnswer("call-1");
		// A person answers first (no `answers`): the waiting call takes it.
		control.onLine({ type: "message", id: "person", text: "postgres", deliverAs: "steer" });
		await expect(ask.outcome).resolves.toEqual({ kind: "answer", text: "postgres" });
		// The supervisor's answer to that call comes back rejected, never steered in.
		control.onLine({ type: "message", id: "sup", text: "sqlite", deliverAs: "steer", answers: "call-1" });
		expect(sent.slice(-2)).toEqual([
			{ type: "receipt", id: "person", status: "delivered", as: "answer" },
			{ type: "receipt", id: "sup", status: "rejected", code: "answered" },
		]);
		const next = control.waitForAnswer("call-2");
		control.onLine({ type: "message", id: "sup2", text: "yes", deliverAs: "steer", answers: "call-2" });
		await expect(next.outcome).resolves.toEqual({ kind: "answer", text: "yes", automated: true });
	});
});

describe("the runner's budget gate", () => {
	function store(meta: Record<string, unknown>, priorUsage?: { totalTokens: number; cost: number }) {
		const root = scratch();
		const rowDir = join(root, "rows", "row-a");
		mkdirSync(join(rowDir, "runs", "run-2"), { recursive: true });
		if (priorUsage) {
			mkdirSync(join(rowDir, "runs", "run-1"), { recursive: true });
			writeFileSync(
				join(rowDir, "runs", "run-1", "status.json"),
				JSON.stringify({
					...initialStatus("run-1", "row-a", 1),
					usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...priorUsage },
				}),
			);
		}
		const writeMeta = (value: Record<string, unknown>) =>
			writeFileSync(join(rowDir, "meta.json"), JSON.stringify({ createdAt: Date.now(), ...value }));
		writeMeta(meta);
		const status = initialStatus("run-2", "row-a", Date.now());
		status.state = "working";
		const sent: unknown[] = [];
		const notes: string[] = [];
		const gate = new BudgetGate(
			{ storeDir: root, rowId: "row-a", runId: "run-2", runDir: join(rowDir, "runs", "run-2") },
			status,
			{ send: (m) => sent.push(m), changed: () => undefined, note: (text) => notes.push(text) },
		);
		return { root, gate, status, sent, notes, writeMeta };
	}
	const turn = (id: string, tokens: number, more = true) => ({
		type: "turn-end" as const,
		id,
		usage: { tokens, cost: 0 },
		more,
	});

	it("counts the row's earlier runs, pauses between turns, and goes on when the limit is raised", () => {
		const { gate, status, sent, notes, writeMeta } = store(
			{ budget: { tokens: 2000 } },
			{ totalTokens: 1000, cost: 0 },
		);
		gate.onTurnEnd(turn("turn-1", 500));
		expect(sent).toEqual([{ type: "go", id: "turn-1" }]);
		expect(status.budget).toEqual({
			scope: "row",
			unit: "tokens",
			limit: 2000,
			spent: 1500,
			rowSpent: { tokens: 1500, cost: 0 },
		});
		gate.onTurnEnd(turn("turn-2", 1100));
		expect(sent).toHaveLength(1);
		expect(status).toMatchObject({
			state: "needs_input",
			question: "budget reached: 2k tokens; raise or stop",
			questionSource: "budget",
			budget: { spent: 2100, paused: true },
		});
		expect(notes).toEqual(["budget reached: 2k tokens; raise or stop"]);
		gate.poll();
		expect(sent).toHaveLength(1);
		writeMeta({ budget: { tokens: 10_000 } });
		gate.poll();
		expect(sent).toEqual([
			{ type: "go", id: "turn-1" },
			{ type: "go", id: "turn-2" },
		]);
		expect(status).toMatchObject({ state: "working", question: undefined, questionSource: undefined });
		expect(status.budget?.paused).toBeUndefined();
	});

	it("never pauses a run whose last turn crossed it, and writes no ledger without a budget", () => {
		const { root, gate, sent } = store({ budget: { tokens: 100 } });
		gate.onTurnEnd(turn("turn-1", 500, false));
		expect(sent).toEqual([{ type: "go", id: "turn-1" }]);
		const free = store({});
		free.gate.onTurnEnd(turn("turn-1", 500));
		expect(free.sent).toEqual([{ type: "go", id: "turn-1" }]);
		expect(free.status.budget).toBeUndefined();
		expect(new SpendLedger(free.root).sum(() => true, Date.now(), Date.now())).toEqual({ tokens: 0, cost: 0 });
		expect(new SpendLedger(root).sum(() => true, Date.now(), Date.now())).toEqual({ tokens: 500, cost: 0 });
	});

	it("sums the attempt set's and the board's day from the ledger", async () => {
		const set = store({ attempt: { setId: "set-1", index: 1, count: 2 }, setBudget: { tokens: 1000 } });
		appendSpend(set.root, { at: Date.now(), row: "row-b", run: "run-9", set: "set-1", tokens: 800, cost: 0 });
		set.gate.onTurnEnd(turn("turn-1", 300));
		expect(set.status).toMatchObject({
			state: "needs_input",
			question: "budget reached: 1k tokens (the attempt set's budget); raise or stop",
			budget: { scope: "set", spent: 1100 },
		});
		const day = store({});
		await updatePolicy(
			day.root,
			(policy) => (policy.budgets = { day: { cost: 1 }, targets: { local: { tokens: 1_000_000 } } }),
		);
		appendSpend(day.root, { at: Date.now(), row: "row-z", run: "run-z", target: "dev", tokens: 10, cost: 0.75 });
		day.gate.onTurnEnd({ type: "turn-end", id: "turn-1", usage: { tokens: 10, cost: 0.5 }, more: true });
		expect(day.status).toMatchObject({
			state: "needs_input",
			question: "budget reached: $1.00 (the board's daily budget); raise or stop",
			budget: { scope: "day", unit: "cost" },
		});
	});
});
