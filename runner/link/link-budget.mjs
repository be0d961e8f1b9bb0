// Budgets of a run on a target, as its link keeps them (docs/engine.md, "Supervisor, budgets and presets").
// The far runner holds each turn's end and says so in its status (`turnHold`, runner/far/far-turn-hold.mjs);
// the link, the run's owner on this machine, runs the same gate a local runner does (life/budget-gate.mjs)
// against this machine's ledger, meta.json and policy.json, and sends what it decided to the far runner as
// an inbox message of kind "budget": go on, or pause there with the gate's question and lines. The gate's
// status here is a scratch copy: the far runner stays the one writer of the run's status, which the mirror
// brings back. While paused the gate polls for a raise every second, as a runner does.
import { randomBytes } from "node:crypto";
import { BudgetGate } from "../life/budget-gate.mjs";
import { initialStatus } from "../life/state-rules.mjs";

const POLL_MS = 1000;

/** @param {unknown} n */
const amount = (n) => (typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : 0);

/**
 * @param {{ storeDir: string, rowId: string, runId: string, runDir: string, createdAt: number, pool?: string }} run
 * @param {string} target the target the run is on (a pool's member: the pool's daily budget applies too)
 */
export function openLinkBudget(run, target) {
	const scratch = initialStatus(run.runId, run.rowId, run.createdAt);
	/** What the gate did in one call: sent `go`, changed its status, wrote lines. */
	let effects = {
		go: false,
		changed: false,
		notes: /** @type {{ text: string, detail: Record<string, unknown> }[]} */ ([]),
	};
	const gate = new BudgetGate(
		{
			storeDir: run.storeDir,
			rowId: run.rowId,
			runId: run.runId,
			runDir: run.runDir,
			target,
			...(run.pool ? { pool: run.pool } : {}),
			// A link that takes the run over: what an earlier one put in the ledger is not counted twice.
			loggedSince: run.createdAt,
		},
		scratch,
		{
			send: (message) => {
				if (message.type === "go") effects.go = true;
			},
			changed: () => {
				effects.changed = true;
			},
			note: (text, detail) => {
				effects.notes.push({ text, detail });
			},
		},
	);
	/** @type {((message: Record<string, unknown>) => void) | undefined} */
	let deliver;
	/** The last decision sent: sent again on a new connection (the far side drops an id it has). @type {Record<string, unknown> | undefined} */
	let last;
	/** Turn ends decided (the far status names one until its decision arrives there). */
	const decided = new Set();
	/** @type {ReturnType<typeof setInterval> | undefined} */
	let poll;

	/** One decision about `turn` to the far runner, from what the gate just did. @param {string} turn @param {boolean} [quiet] no lines (the far side showed them already) */
	function send(turn, quiet = false) {
		const done = effects;
		effects = { go: false, changed: false, notes: [] };
		if (!done.go && !done.changed && done.notes.length === 0) return;
		const paused = !done.go && scratch.questionSource === "budget";
		last = {
			id: `budget-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`,
			kind: "budget",
			turn,
			go: done.go,
			at: Date.now(),
			...(scratch.budget ? { budget: scratch.budget } : {}),
			...(paused ? { question: scratch.question, options: scratch.questionOptions } : {}),
			...(done.notes.length > 0 && !quiet ? { notes: done.notes } : {}),
		};
		deliver?.(last);
		if (gate.paused && !poll) poll = setInterval(raised, POLL_MS);
		if (!gate.paused && poll) {
			clearInterval(poll);
			poll = undefined;
		}
	}

	/** While paused: a raise lets the same far worker go on. */
	function raised() {
		const turn = gate.held?.id;
		if (!turn) return;
		gate.poll();
		send(turn);
	}

	return {
		/** A connection to the far run: decisions go through `to` from now on. @param {(message: Record<string, unknown>) => void} to */
		attach(to) {
			deliver = to;
			if (last) to(last);
		},
		detach() {
			deliver = undefined;
		},
		/** A status from the far runner (checked by the mirror): a turn end it holds is decided once. @param {Record<string, unknown>} far */
		status(far) {
			if (typeof far.endedAt === "number") return;
			const usage = /** @type {Record<string, unknown> | undefined} */ (far.usage);
			if (usage && typeof usage === "object")
				scratch.usage = { ...scratch.usage, totalTokens: amount(usage.totalTokens), cost: amount(usage.cost) };
			const held = /** @type {Record<string, unknown> | undefined} */ (far.turnHold);
			if (!held || typeof held !== "object" || typeof held.id !== "string" || decided.has(held.id)) return;
			decided.add(held.id);
			gate.onTurnEnd({
				type: "turn-end",
				id: held.id,
				usage: { tokens: amount(held.tokens), cost: amount(held.cost) },
				more: held.more === true,
			});
			// A run an earlier link paused: paused again, its lines are there already.
			send(held.id, far.questionSource === "budget" && gate.paused);
		},
		close() {
			if (poll) clearInterval(poll);
			poll = undefined;
			deliver = undefined;
		},
	};
}
