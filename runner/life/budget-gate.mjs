// The runner's side of budgets. The worker holds the end of each turn for the runner (turn_end, over
// fd 3); the gate sums what this row, its attempt set, its target today and the board today have spent,
// against the limits in meta.json (row, set) and policy.json (day, target), and answers `go`, or pauses
// the run there: a needs-input row, "budget reached: 50k tokens; raise or stop", the worker still
// waiting in place. A raised limit (reply, S, `/agent-board budget`) is seen at the next poll and the
// same worker goes on. Only the runner writes the status; this module changes it through the runner's hooks.
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { readJsonObject } from "../store/fs-util.mjs";
import { rowDirOf } from "../store/store-layout.mjs";
import { crossedLimit, formatLimit, limitError, nearestLimit, pauseQuestion } from "./budget.mjs";
import { readPolicy } from "./policy.mjs";
import { appendSpend, SpendLedger } from "./spend-ledger.mjs";

/** @typedef {import("./budget.mjs").Limits} Limits */
/** @typedef {import("../../src/board/engine/types.ts").RunStatus} RunStatus */

/**
 * @typedef {object} GateHooks
 * @property {(message: import("../protocol.mjs").RunnerToWorker) => void} send   to the worker
 * @property {() => void} changed   the status changed (the runner schedules its write)
 * @property {(text: string, detail: Record<string, unknown>) => void} note   one line in the row's events
 */

/** @param {unknown} value @returns {import("./budget.mjs").Limit | undefined} */
const limitOf = (value) =>
	value !== undefined && limitError(value) === undefined
		? /** @type {import("./budget.mjs").Limit} */ (value)
		: undefined;

/** A ledger line of this target's day: run there, or placed there by this pool. @param {import("./spend-ledger.mjs").SpendLine} line @param {string} name */
const onTarget = (line, name) => (line.target ?? "local") === name || line.pool === name;

export class BudgetGate {
	/**
	 * @param {{ storeDir: string, rowId: string, runId: string, runDir: string, target?: string, pool?: string, loggedSince?: number }} run
	 *   `pool`: a pool's run (its `target` is the member): the pool's daily budget applies as well as the member's
	 *   `loggedSince`: the run's start, when this gate takes over a run a gate already logged (a target run's
	 *   new link): what the ledger has of it since then counts as logged
	 * @param {RunStatus} status the runner's status (changed in place)
	 * @param {GateHooks} hooks
	 */
	constructor(run, status, hooks) {
		this.run = run;
		this.status = status;
		this.hooks = hooks;
		this.ledger = new SpendLedger(run.storeDir);
		/** What this run has put in the ledger so far. */
		this.logged =
			run.loggedSince === undefined
				? { tokens: 0, cost: 0 }
				: this.ledger.sum((line) => line.run === run.runId, run.loggedSince, Date.now());
		/** This run's spend as last reported. */
		this.runSpend = { tokens: 0, cost: 0 };
		/** The turn held while the run is paused. @type {{ id: string } | undefined} */
		this.held = undefined;
		this.prior = this.priorSpend();
	}

	/** The row's earlier runs' spend (their final usage), read once. */
	priorSpend() {
		let tokens = 0;
		let cost = 0;
		const runsDir = dirname(this.run.runDir);
		let names = [];
		try {
			names = readdirSync(runsDir);
		} catch {
			return { tokens, cost };
		}
		for (const name of names) {
			if (name === this.run.runId) continue;
			const usage = /** @type {Record<string, unknown> | undefined} */ (
				readJsonObject(join(runsDir, name, "status.json"))?.usage
			);
			if (typeof usage?.totalTokens === "number") tokens += usage.totalTokens;
			if (typeof usage?.cost === "number") cost += usage.cost;
		}
		return { tokens, cost };
	}

	/** The limits that apply now, and what the row's meta says of its set. */
	limits() {
		const meta = readJsonObject(join(rowDirOf(this.run.storeDir, this.run.rowId), "meta.json")) ?? {};
		const { policy } = readPolicy(this.run.storeDir);
		const attempt = /** @type {{ setId?: unknown } | undefined} */ (meta.attempt);
		const setId = typeof attempt?.setId === "string" ? attempt.setId : undefined;
		/** @type {Limits} */
		const limits = {};
		const row = limitOf(meta.budget);
		const set = setId ? limitOf(meta.setBudget) : undefined;
		const target = this.dailyTarget(policy.budgets?.targets ?? {});
		const day = limitOf(policy.budgets?.day);
		if (row) limits.row = row;
		if (set) limits.set = set;
		if (target) limits.target = target.limit;
		if (day) limits.day = day;
		return {
			limits,
			setId,
			since: typeof meta.createdAt === "number" ? meta.createdAt : Date.now(),
			targetName: target?.name ?? this.run.target ?? "local",
		};
	}

	/**
	 * The target's daily limit that applies: the run's target's, or for a pool's run the member's and the
	 * pool's, whichever is crossed (else nearer its limit).
	 * @param {Record<string, unknown>} targets policy.json's budgets.targets
	 */
	dailyTarget(targets) {
		const named = [this.run.target ?? "local", ...(this.run.pool ? [this.run.pool] : [])].flatMap((name) => {
			const limit = limitOf(targets[name]);
			return limit ? [{ name, limit }] : [];
		});
		if (named.length < 2) return named[0];
		const now = Date.now();
		const dayStart = new Date(now).setHours(0, 0, 0, 0);
		/** @param {{ name: string, limit: import("./budget.mjs").Limit }} entry */
		const ratio = ({ name, limit }) => {
			const spent = { target: this.ledger.sum((line) => onTarget(line, name), dayStart, now) };
			if (crossedLimit(spent, { target: limit })) return Infinity;
			const near = nearestLimit(spent, { target: limit });
			return near ? near.spent / near.limit : 0;
		};
		return named.reduce((best, entry) => (ratio(entry) > ratio(best) ? entry : best));
	}

	/** @param {ReturnType<BudgetGate["limits"]>} read @param {number} now */
	spends(read, now) {
		const { limits, setId, since } = read;
		const dayStart = new Date(now).setHours(0, 0, 0, 0);
		return {
			row: { tokens: this.prior.tokens + this.runSpend.tokens, cost: this.prior.cost + this.runSpend.cost },
			...(limits.set && setId ? { set: this.ledger.sum((line) => line.set === setId, since, now) } : {}),
			...(limits.target
				? { target: this.ledger.sum((line) => onTarget(line, read.targetName), dayStart, now) }
				: {}),
			...(limits.day ? { day: this.ledger.sum(() => true, dayStart, now) } : {}),
		};
	}

	/** What this run spent since its last line goes to the ledger (only while a budget applies). @param {ReturnType<BudgetGate["limits"]>} read @param {number} now */
	record(read, now) {
		const tokens = this.runSpend.tokens - this.logged.tokens;
		const cost = this.runSpend.cost - this.logged.cost;
		if (Object.keys(read.limits).length === 0 || (tokens <= 0 && cost <= 0)) return;
		try {
			appendSpend(this.run.storeDir, {
				at: now,
				row: this.run.rowId,
				run: this.run.runId,
				...(read.setId ? { set: read.setId } : {}),
				...(this.run.target ? { target: this.run.target } : {}),
				...(this.run.pool ? { pool: this.run.pool } : {}),
				tokens,
				cost,
			});
			this.logged = { ...this.runSpend };
		} catch {
			// A full disk: the line goes with the next turn's.
		}
	}

	/** @param {ReturnType<BudgetGate["limits"]>} read @param {number} now */
	check(read, now) {
		const spends = this.spends(read, now);
		const near = nearestLimit(spends, read.limits);
		const row = spends.row;
		this.status.budget = near
			? {
					...near,
					...(near.scope === "target" ? { target: read.targetName } : {}),
					rowSpent: row,
					...(this.held ? { paused: true } : {}),
				}
			: undefined;
		return crossedLimit(spends, read.limits);
	}

	/** @param {import("../protocol.mjs").TurnEnd} report */
	onTurnEnd(report) {
		const now = Date.now();
		this.runSpend = {
			tokens: Math.max(report.usage.tokens, this.status.usage.totalTokens),
			cost: Math.max(report.usage.cost, this.status.usage.cost),
		};
		const read = this.limits();
		this.record(read, now);
		const crossed = this.check(read, now);
		// Only between turns: a run that ends with this turn ends as it would.
		if (!crossed || !report.more) {
			this.hooks.send({ type: "go", id: report.id });
			this.hooks.changed();
			return;
		}
		this.held = { id: report.id };
		const { question, options } = pauseQuestion(crossed, read.targetName);
		this.status.state = "needs_input";
		this.status.question = question;
		this.status.questionOptions = options;
		this.status.questionSource = "budget";
		if (this.status.budget) this.status.budget.paused = true;
		this.hooks.note(question, {
			scope: crossed.scope,
			unit: crossed.unit,
			limit: crossed.limit,
			spent: crossed.spent,
		});
		this.hooks.changed();
	}

	/** While paused: a raised (or removed) limit lets the same worker go on. */
	poll() {
		if (!this.held) return;
		const read = this.limits();
		if (this.check(read, Date.now())) return;
		const { id } = this.held;
		this.held = undefined;
		this.status.state = "working";
		this.status.question = undefined;
		this.status.questionOptions = undefined;
		this.status.questionSource = undefined;
		if (this.status.budget) this.status.budget.paused = undefined;
		const limit = this.status.budget
			? formatLimit({ [this.status.budget.unit]: this.status.budget.limit })
			: "no limit";
		this.hooks.note(`budget raised (${limit}); going on`, {});
		this.hooks.send({ type: "go", id });
		this.hooks.changed();
	}

	get paused() {
		return this.held !== undefined;
	}
}
