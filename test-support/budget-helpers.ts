/**
 * What the budget end-to-end files read and run alike: the local spend ledger, a worker's pid from its
 * run's worker.json, the scripted steps of a budgeted row, and the container kinds' one cell (a row's token
 * budget pauses it at a turn's end; a raise lets the same run finish in place).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { dayOf, spendDir } from "../runner/life/spend-ledger.mjs";
import type { BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { rowWhere, waitDone } from "./board-helpers.ts";
import type { FauxStep } from "./faux-script.ts";
import type { ModelServer } from "./model-server.ts";

export interface SpendLine {
	run: string;
	set?: string;
	tokens: number;
	target?: string;
	pool?: string;
}

/** Today's lines of a store's spend ledger (none when nothing was spent under a budget yet today). */
export function ledger(storeDir: string): SpendLine[] {
	let text = "";
	try {
		text = readFileSync(join(spendDir(storeDir), `${dayOf(Date.now())}.jsonl`), "utf8");
	} catch {
		// Nothing spent under a budget yet today.
	}
	return text
		.split("\n")
		.filter(Boolean)
		.map((line) => JSON.parse(line) as SpendLine);
}

/** A run's lines of today's ledger, one per turn, in order. */
export const runSpends = (storeDir: string, runId: string): SpendLine[] =>
	ledger(storeDir).filter((line) => line.run === runId);

/** Tokens the ledger has today of the lines that pass `keep`. */
export const spentToday = (storeDir: string, keep: (line: SpendLine) => boolean): number =>
	ledger(storeDir)
		.filter(keep)
		.reduce((sum, line) => sum + line.tokens, 0);

/** The pid in a run dir's worker.json (on a target: in the far side's own pid namespace). */
export const workerPidIn = (runDir: string): number =>
	(JSON.parse(readFileSync(join(runDir, "worker.json"), "utf8")) as { pid: number }).pid;

/** `n` model requests of 15 tokens each (the model server's usage), each with one bash call, then the end. */
export const budgetSteps = (tag: string, n: number): FauxStep[] => [
	...Array.from(
		{ length: n },
		(_, i): FauxStep => ({
			text: `${tag} step ${i + 1}.`,
			toolCall: { name: "bash", args: { command: `echo ${i}` } },
		}),
	),
	{ text: "All steps done." },
];

export interface PauseRaiseCell {
	board: BoardEngine;
	model: ModelServer;
	repo: string;
	target: string;
	/** The word the model's script matches: the row's prompt and its steps carry it. */
	tag: string;
	/** The far worker's pid where it can be read from here; the same pid after the raise is asserted. */
	farWorker?: (row: BoardRow) => number;
}

/**
 * A row's 40-token budget on `target`: it pauses at the end of the third 15-token turn (the budget's
 * question, no request after it, every turn's spend in this machine's ledger), and a raise lets the same run
 * (and, where it can be read, the same far worker) finish.
 */
export async function pauseAndRaiseInPlace(cell: PauseRaiseCell): Promise<void> {
	const { board, model, tag, target } = cell;
	const steps = budgetSteps(tag, 6);
	model.setScript({ rules: [{ match: tag, steps }] });
	const dispatched = await board.dispatch({
		prompt: `${tag} walk the files`,
		cwd: cell.repo,
		target,
		budget: { tokens: 40 },
	});
	const paused = await rowWhere(
		board,
		dispatched.id,
		`the row on ${target} to pause on its budget`,
		(row) => row.state === "needs_input" && row.budget?.paused === true,
		240_000,
	);
	expect(paused).toMatchObject({
		alive: true,
		question: "budget reached: 40 tokens; raise or stop",
		currentRunId: dispatched.currentRunId,
	});
	expect(paused.budget).toMatchObject({ scope: "row", unit: "tokens", limit: 40, spent: 45 });
	const requests = () => model.requests().filter((request) => request.prompt.includes(tag));
	const turns = runSpends(board.storeDir, dispatched.currentRunId ?? "").map(
		(line) => `${line.target}:${line.tokens}`,
	);
	expect(turns).toEqual([`${target}:15`, `${target}:15`, `${target}:15`]);
	expect(requests()).toHaveLength(3);
	const pid = cell.farWorker?.(paused);
	// Resumed: the run's owner saw the pause end in place (a parked run would be continued by a new run).
	const raised = await board.budget?.(paused.id, { tokens: 1_000_000 });
	expect(raised).toMatchObject({ scope: "row", outcome: "resumed" });
	const done = await waitDone(board, paused.id, 180_000);
	expect(done).toMatchObject({
		state: "completed",
		latestAssistant: "All steps done.",
		currentRunId: dispatched.currentRunId,
	});
	if (cell.farWorker) expect(cell.farWorker(done)).toBe(pid);
	expect(requests()).toHaveLength(steps.length);
}
