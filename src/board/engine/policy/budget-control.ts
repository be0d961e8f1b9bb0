/**
 * Raising a budget: `/agent-board budget <id> <amount>`, a reply to a paused row ("raise to 100k"), and
 * the settings (S) for the day and target budgets. The limit is written where it lives (the row's
 * meta.json under its lock, every row of an attempt set, or policy.json under its lock); a run paused
 * in place sees it at its next poll and the same worker goes on; a paused run that parked meanwhile is
 * continued by a new run on the same session.
 */
import { parseBudgetReply, formatLimit } from "../../../../runner/life/budget.mjs";
import { updatePolicy } from "../../../../runner/life/policy.mjs";
import type { EngineContext } from "../engine-context.ts";
import { BoardError } from "../../../../runner/life/reasons.mjs";
import { resumeRun } from "../launch.ts";
import type { MetaUpdates } from "../meta-update.ts";
import { readRow, requireMeta } from "../row-read.ts";
import { runOwner } from "../../../../runner/life/run-owner.mjs";
import { FileCache, listRowIds, readMeta, readStatus } from "../store.ts";
import type { BoardRow, BudgetLimit, BudgetResult, ReplyResult, RunStatus } from "../types.ts";

/** How long a raise waits to see the paused worker go on (it polls every second). */
const RESUME_WAIT_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Paused by a budget: waiting in place, or parked with the budget's question. */
export function budgetPaused(status: RunStatus): boolean {
	return status.state === "needs_input" && status.questionSource === "budget";
}

export function budgetControl(ctx: EngineContext, meta: MetaUpdates, stop: (id: string) => Promise<BoardRow>) {
	const status = (id: string): RunStatus =>
		readStatus(ctx.paths.run(id, requireMeta(ctx, id).currentRunId), new FileCache());

	/** The rows of an attempt set (an explicit command: one pass over the metas is fine). */
	function setMembers(setId: string): string[] {
		return listRowIds(ctx.paths).filter((id) => {
			try {
				return readMeta(ctx.paths, id, ctx.cache).attempt?.setId === setId;
			} catch {
				return false;
			}
		});
	}

	async function raise(id: string, amount: BudgetLimit): Promise<BudgetResult> {
		if (amount.tokens === undefined && amount.cost === undefined)
			throw new BoardError("invalid", "a budget needs an amount: 50k (tokens) or $2 (cost)");
		const before = status(id);
		const paused = budgetPaused(before);
		const scope = paused ? (before.budget?.scope ?? "row") : "row";
		// Below what is spent, the row would pause again at once.
		if (paused && before.budget) {
			const unitAmount = before.budget.unit === "tokens" ? amount.tokens : amount.cost;
			if (unitAmount !== undefined && unitAmount <= before.budget.spent) {
				throw new BoardError(
					"invalid",
					`${before.budget.scope === "row" ? "this row" : `the ${before.budget.scope}`} has spent ${formatLimit({ [before.budget.unit]: before.budget.spent })} already: raise above that`,
				);
			}
		}
		const merge = (limit: BudgetLimit | undefined): BudgetLimit => ({ ...limit, ...amount });
		const row = requireMeta(ctx, id);
		if (scope === "row") await meta.update(id, (m) => (m.budget = merge(m.budget)));
		else if (scope === "set" && row.attempt)
			for (const member of setMembers(row.attempt.setId))
				await meta.update(member, (m) => (m.setBudget = merge(m.setBudget)));
		else if (scope === "target" || scope === "day") {
			await updatePolicy(ctx.storeDir, (policy) => {
				policy.budgets ??= {};
				const budgets = policy.budgets;
				if (scope === "day") budgets.day = merge(budgets.day);
				else {
					// The one that paused it: a pool's run names its member or its pool.
					const name = before.budget?.target ?? row.target ?? "local";
					budgets.targets ??= {};
					budgets.targets[name] = merge(budgets.targets[name]);
				}
			});
		}
		if (!paused) return { row: readRow(ctx, id), scope, outcome: "set" };
		const runDir = ctx.paths.run(id, row.currentRunId);
		if (runOwner(ctx.storeDir, runDir, before) === "runner") {
			for (const deadline = Date.now() + RESUME_WAIT_MS; Date.now() < deadline; await sleep(50)) {
				if (!budgetPaused(status(id))) return { row: readRow(ctx, id), scope, outcome: "resumed" };
			}
			return { row: readRow(ctx, id), scope, outcome: "resumed" };
		}
		await meta.withLock(id, () =>
			resumeRun(
				ctx,
				requireMeta(ctx, id),
				`The budget was raised to ${formatLimit(amount)}. Continue where you left off.`,
			),
		);
		return { row: readRow(ctx, id), scope, outcome: "new-run" };
	}

	/**
	 * A reply to a row a budget paused: a new amount raises it, "stop" stops it; anything else is refused
	 * with what to type. Undefined when the row is not paused by a budget (the reply goes its usual way).
	 */
	async function reply(id: string, text: string): Promise<ReplyResult | undefined> {
		if (!budgetPaused(status(id))) return undefined;
		const parsed = parseBudgetReply(text);
		if (!parsed)
			throw new BoardError(
				"invalid",
				`row ${id} is paused by its budget: reply with a new amount (e.g. "raise to 100k", "$5") or "stop"`,
			);
		if ("stop" in parsed) return { row: await stop(id), delivery: "stopped" };
		const result = await raise(id, parsed.raise);
		return { row: result.row, delivery: result.outcome === "new-run" ? "new-run" : "budget" };
	}

	return { raise, reply };
}
