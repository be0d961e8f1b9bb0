// What a runner adds to a run when the user turned it on: the budget gate (runner/life/budget-gate.mjs)
// and the supervisor (runner/supervisor/). Both change the run's status only through the runner's hooks
// (the runner stays its one writer) and say what they did as a line of the row's events.
import { FarTurnHold } from "./far/far-turn-hold.mjs";
import { BudgetGate } from "./life/budget-gate.mjs";
import { pushEvent, summarize } from "./life/state-rules.mjs";
import { Supervisor } from "./supervisor/supervisor.mjs";
import { RUN_TAG } from "./store/proc.mjs";

/**
 * @param {import("./life/run-config.mjs").RunConfig} config
 * @param {import("../src/board/engine/types.ts").RunStatus} status
 * @param {{ send: (message: import("./protocol.mjs").RunnerToWorker) => void, changed: () => void, flush: () => void, event: (event: Record<string, unknown>) => void, over: () => boolean }} runner
 */
export function runHelpers(config, status, runner) {
	const changed = () => {
		status.summary = summarize(status);
		runner.changed();
	};
	/** @param {"budget" | "supervisor"} type */
	const note = (type) => (/** @type {string} */ text, /** @type {Record<string, unknown>} */ detail) => {
		const at = Date.now();
		pushEvent(status, at, text);
		runner.event({ type, text, ...detail });
		changed();
	};
	// A far run's turn ends are decided by its link, against this machine's ledger and limits (far-turn-hold.mjs).
	const gate =
		config.budgetBy === "link"
			? new FarTurnHold(status, { send: runner.send, changed, flush: runner.flush, note: note("budget") })
			: localGate(config, status, { send: runner.send, changed, note: note("budget") });
	// The supervisor's model run is not one of the run's processes: the slot is the worker's.
	const env = { ...process.env };
	delete env[RUN_TAG];
	const supervisor = new Supervisor(config, status, { changed, note: note("supervisor"), over: runner.over }, env);
	// A supervisor model still deciding when the runner exits is of no use to anyone.
	process.on("exit", () => supervisor.close());
	/** @param {import("./life/inbox.mjs").InboxMessage} message a far run's link decided a held turn */
	const verdict = (message) => {
		if (gate instanceof FarTurnHold) gate.verdict(message);
	};
	return { gate, supervisor, verdict };
}

/**
 * @param {import("./life/run-config.mjs").RunConfig} config
 * @param {import("../src/board/engine/types.ts").RunStatus} status
 * @param {import("./life/budget-gate.mjs").GateHooks} hooks
 */
function localGate(config, status, hooks) {
	return new BudgetGate(
		{
			storeDir: config.storeDir,
			rowId: config.rowId,
			runId: config.runId,
			runDir: config.runDir,
			target: config.supervise?.target,
		},
		status,
		hooks,
	);
}
