/**
 * A target run's budgets without pi or ssh: the link's half (link-budget.mjs: the local gate on the far
 * status's held turn, its decisions as inbox messages, the ledger counted once across a new link) and
 * the far runner's (far-turn-hold.mjs: the held turn in its status, a decision applied to it).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { FarTurnHold } from "../runner/far/far-turn-hold.mjs";
import type { InboxMessage } from "../runner/life/inbox.mjs";
import { dayOf, spendDir } from "../runner/life/spend-ledger.mjs";
import { initialStatus } from "../runner/life/state-rules.mjs";
import { openLinkBudget } from "../runner/link/link-budget.mjs";
import type { RunnerToWorker } from "../runner/protocol.mjs";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A store with one row (its meta.json's budget) and its run's dir. */
function store(budget: Record<string, number>) {
	const storeDir = mkdtempSync(join(tmpdir(), "pab-link-budget-"));
	dirs.push(storeDir);
	const rowDir = join(storeDir, "rows", "r1");
	const runDir = join(rowDir, "runs", "run1");
	mkdirSync(runDir, { recursive: true });
	writeFileSync(join(rowDir, "meta.json"), JSON.stringify({ id: "r1", createdAt: Date.now(), budget }));
	return { storeDir, rowId: "r1", runId: "run1", runDir, createdAt: Date.now() - 1000 };
}

/** The far status as the follow streams it: `tokens` spent, a turn held. */
function far(turn: string | undefined, tokens: number, paused = false): Record<string, unknown> {
	const status = initialStatus("run1", "r1", Date.now()) as unknown as Record<string, unknown>;
	status.state = paused ? "needs_input" : "working";
	status.usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: tokens, cost: 0 };
	if (paused) status.questionSource = "budget";
	if (turn) status.turnHold = { id: turn, tokens, cost: 0, more: true };
	return status;
}

const ledger = (storeDir: string) =>
	readFileSync(join(spendDir(storeDir), `${dayOf(Date.now())}.jsonl`), "utf8")
		.split("\n")
		.filter(Boolean)
		.map((line) => JSON.parse(line) as { run: string; target?: string; tokens: number });

describe("a target run's budget, at its link", () => {
	it("lets each held turn go until the limit, then pauses it with the question; a raise lets it go", () => {
		vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
		try {
			const run = store({ tokens: 40 });
			const budget = openLinkBudget(run, "h");
			const sent: Record<string, unknown>[] = [];
			budget.attach((message) => sent.push(message));
			budget.status(far("turn-1", 15));
			budget.status(far("turn-1", 15));
			expect(sent).toHaveLength(1);
			expect(sent[0]).toMatchObject({
				kind: "budget",
				turn: "turn-1",
				go: true,
				budget: { scope: "row", spent: 15 },
			});
			budget.status(far("turn-2", 30));
			budget.status(far("turn-3", 45));
			expect(sent[2]).toMatchObject({
				turn: "turn-3",
				go: false,
				question: "budget reached: 40 tokens; raise or stop",
				options: ["raise to 1k", "stop"],
				budget: { scope: "row", limit: 40, spent: 45, paused: true },
				notes: [{ text: "budget reached: 40 tokens; raise or stop" }],
			});
			expect(ledger(run.storeDir)).toEqual([
				expect.objectContaining({ run: "run1", target: "h", tokens: 15 }),
				expect.objectContaining({ tokens: 15 }),
				expect.objectContaining({ tokens: 15 }),
			]);
			// Still paused: the poll sends nothing. Raised in meta.json: the same turn goes.
			vi.advanceTimersByTime(1000);
			expect(sent).toHaveLength(3);
			writeFileSync(
				join(run.storeDir, "rows", "r1", "meta.json"),
				JSON.stringify({ id: "r1", budget: { tokens: 1000 } }),
			);
			vi.advanceTimersByTime(1000);
			expect(sent[3]).toMatchObject({
				turn: "turn-3",
				go: true,
				notes: [{ text: "budget raised (1k tokens); going on" }],
			});
			// A new connection gets the last decision again, with its id (the far side drops one it has).
			const again: Record<string, unknown>[] = [];
			budget.detach();
			budget.attach((message) => again.push(message));
			expect(again).toEqual([sent[3]]);
			budget.close();
		} finally {
			vi.useRealTimers();
		}
	});

	it("a new link that takes a paused run over pauses it again without logging its spend twice or repeating its lines", () => {
		const run = store({ tokens: 40 });
		const first = openLinkBudget(run, "h");
		first.attach(() => undefined);
		for (const [turn, tokens] of [
			["turn-1", 15],
			["turn-2", 30],
			["turn-3", 45],
		] as const)
			first.status(far(turn, tokens));
		first.close();
		const second = openLinkBudget(run, "h");
		const sent: Record<string, unknown>[] = [];
		second.attach((message) => sent.push(message));
		second.status(far("turn-3", 45, true));
		expect(sent).toHaveLength(1);
		expect(sent[0]).toMatchObject({
			turn: "turn-3",
			go: false,
			question: "budget reached: 40 tokens; raise or stop",
		});
		expect(sent[0]?.notes).toBeUndefined();
		expect(ledger(run.storeDir).reduce((sum, line) => sum + line.tokens, 0)).toBe(45);
		second.close();
	});
});

describe("a target run's budget, at the far runner", () => {
	it("holds a turn in its status and applies the link's decision to that turn only", () => {
		const status = initialStatus("run1", "r1", Date.now());
		status.state = "working";
		const toWorker: RunnerToWorker[] = [];
		const notes: string[] = [];
		let flushed = 0;
		const hold = new FarTurnHold(status, {
			send: (message) => toWorker.push(message),
			changed: () => undefined,
			flush: () => {
				flushed += 1;
			},
			note: (text) => notes.push(text),
		});
		hold.onTurnEnd({ type: "turn-end", id: "turn-3", usage: { tokens: 45, cost: 0 }, more: true });
		expect(status.turnHold).toEqual({ id: "turn-3", tokens: 45, cost: 0, more: true });
		expect(flushed).toBe(1);
		const decision = (fields: Partial<InboxMessage>): InboxMessage => ({
			id: "m",
			kind: "budget",
			at: Date.now(),
			turn: "turn-3",
			go: false,
			...fields,
		});
		hold.verdict(decision({ turn: "turn-2", go: true }));
		expect(toWorker).toEqual([]);
		hold.verdict(
			decision({
				question: "budget reached: 40 tokens; raise or stop",
				options: ["raise to 1k", "stop"],
				budget: { scope: "row", unit: "tokens", limit: 40, spent: 45, paused: true },
				notes: [{ text: "budget reached: 40 tokens; raise or stop", detail: {} }],
			}),
		);
		expect(status).toMatchObject({
			state: "needs_input",
			questionSource: "budget",
			question: "budget reached: 40 tokens; raise or stop",
			budget: { scope: "row", limit: 40, spent: 45, paused: true },
		});
		expect(hold.paused).toBe(true);
		expect(notes).toEqual(["budget reached: 40 tokens; raise or stop"]);
		expect(toWorker).toEqual([]);
		hold.verdict(decision({ go: true, budget: { scope: "row", unit: "tokens", limit: 1000, spent: 45 } }));
		expect(toWorker).toEqual([{ type: "go", id: "turn-3" }]);
		expect(status).toMatchObject({ state: "working", turnHold: undefined, question: undefined });
		expect(hold.paused).toBe(false);
	});
});
