// A far run's half of budgets (docs/engine.md, "Supervisor, budgets and presets"): the limits, the ledger
// and the raises live on the link's machine, so the far runner does not judge a turn's end itself. It
// holds the worker there, says so in its status (`turnHold`, which the follow streams to the link), and
// applies what the link's gate (runner/life/budget-gate.mjs, run by runner/link/link-budget.mjs) decided:
// an inbox message of kind "budget" naming the turn, that lets the worker go on or pauses the run there
// with the gate's question. The runner stays the one writer of the status and the events.
/** @typedef {import("../life/inbox.mjs").InboxMessage} InboxMessage */

/**
 * @typedef {object} HoldHooks
 * @property {(message: import("../protocol.mjs").RunnerToWorker) => void} send   to the worker
 * @property {() => void} changed   the status changed (the runner schedules its write)
 * @property {() => void} flush     the status must reach the link now (a turn waits on it)
 * @property {(text: string, detail: Record<string, unknown>) => void} note   one line in the row's events
 */

/** @param {unknown} value */
const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/** @param {unknown} value @returns {import("../../src/board/engine/types.ts").BudgetView | undefined} */
function budgetView(value) {
	if (!isObject(value)) return undefined;
	const v = /** @type {Record<string, unknown>} */ (value);
	const finite = (/** @type {unknown} */ n) => typeof n === "number" && Number.isFinite(n);
	if (
		typeof v.scope !== "string" ||
		(v.unit !== "tokens" && v.unit !== "cost") ||
		!finite(v.limit) ||
		!finite(v.spent)
	)
		return undefined;
	return /** @type {import("../../src/board/engine/types.ts").BudgetView} */ (v);
}

export class FarTurnHold {
	/**
	 * @param {import("../life/state-rules.mjs").RunStatus} status the runner's status (changed in place)
	 * @param {HoldHooks} hooks
	 */
	constructor(status, hooks) {
		this.status = status;
		this.hooks = hooks;
	}

	/** The worker holds a turn's end: the link decides it. @param {import("../protocol.mjs").TurnEnd} report */
	onTurnEnd(report) {
		this.status.turnHold = { id: report.id, tokens: report.usage.tokens, cost: report.usage.cost, more: report.more };
		this.hooks.flush();
	}

	/** The link's gate decided the held turn (an inbox message of kind "budget"). @param {InboxMessage} message */
	verdict(message) {
		const held = this.status.turnHold;
		if (!held || held.id !== message.turn) return;
		const budget = budgetView(message.budget);
		this.status.budget = budget;
		for (const note of Array.isArray(message.notes) ? message.notes : [])
			if (isObject(note) && typeof note.text === "string")
				this.hooks.note(note.text, isObject(note.detail) ? note.detail : {});
		if (message.go) {
			this.status.turnHold = undefined;
			if (this.status.questionSource === "budget") {
				this.status.state = "working";
				this.status.question = undefined;
				this.status.questionOptions = undefined;
				this.status.questionSource = undefined;
			}
			this.hooks.send({ type: "go", id: held.id });
		} else if (typeof message.question === "string") {
			this.status.state = "needs_input";
			this.status.question = message.question;
			this.status.questionOptions = Array.isArray(message.options)
				? message.options.filter((option) => typeof option === "string")
				: undefined;
			this.status.questionSource = "budget";
		}
		this.hooks.changed();
	}

	/** The link's gate polls for a raise, not this runner. */
	poll() {}

	get paused() {
		return this.status.questionSource === "budget";
	}
}
