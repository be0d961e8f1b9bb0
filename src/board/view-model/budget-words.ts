/** What setting a budget did, in the words `/agent-board budget` prints and the page shows. */
import { formatLimit } from "../../../runner/life/budget.mjs";
import type { BudgetLimit, BudgetResult } from "../engine/types.ts";

const SCOPE_WORDS = {
	row: "this row's budget",
	set: "the attempt set's budget",
	target: "the target's daily budget",
	day: "the board's daily budget",
} as const;

export function budgetResultText(id: string, amount: BudgetLimit, result: BudgetResult): string {
	const what = `${SCOPE_WORDS[result.scope]} is now ${formatLimit(amount)}`;
	if (result.outcome === "resumed") return `${id}: ${what}; it goes on in the same process`;
	if (result.outcome === "new-run") return `${id}: ${what}; a new run continues its session`;
	return `${id}: ${what}`;
}
