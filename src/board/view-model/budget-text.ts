/** Spend against budget, as the list, the table and the peek show it. */
import type { BoardRow, BudgetView } from "../engine/types.ts";
import { formatCost, formatTokens } from "../../../runner/life/budget.mjs";

const SCOPE_TEXT: Record<BudgetView["scope"], string> = {
	row: "this row",
	set: "its attempt set",
	target: "its target today",
	day: "the board today",
};

const amount = (unit: BudgetView["unit"], n: number): string => (unit === "tokens" ? formatTokens(n) : formatCost(n));

/** "1.8k/2k tok" (the row's own budget) or "day 40k/50k tok"; undefined without a budget. */
export function budgetText(row: BoardRow): string | undefined {
	const budget = row.budget;
	if (budget) {
		const tag = budget.scope === "row" ? "" : `${budget.scope} `;
		return `${tag}${amount(budget.unit, budget.spent)}/${amount(budget.unit, budget.limit)}${budget.unit === "tokens" ? " tok" : ""}`;
	}
	const limit = row.budgetLimit;
	if (!limit) return undefined;
	if (limit.tokens !== undefined)
		return `${formatTokens(row.usage?.totalTokens ?? 0)}/${formatTokens(limit.tokens)} tok`;
	return limit.cost !== undefined ? `${formatCost(row.usage?.cost ?? 0)}/${formatCost(limit.cost)}` : undefined;
}

/** The peek's line: "1.8k of 2k tokens (this row) · paused: raise it with r or /agent-board budget". */
export function budgetDetail(row: BoardRow): string | undefined {
	const budget = row.budget;
	if (!budget) return budgetText(row);
	const paused = budget.paused ? " · paused: reply with a new amount, or /agent-board budget <id> <amount>" : "";
	return `${amount(budget.unit, budget.spent)} of ${amount(budget.unit, budget.limit)}${budget.unit === "tokens" ? " tokens" : ""} (${SCOPE_TEXT[budget.scope]})${paused}`;
}
