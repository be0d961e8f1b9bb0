/** A merge's plan as one question, the same words in the board and the web page (dashboard/merge-flow.ts asks it). */
import type { BoardRow, MergePlan } from "../engine/types.ts";
import { clean } from "./row-text.ts";

export function plural(n: number, word: string): string {
	return `${n} ${word}${n === 1 ? "" : "s"}`;
}

export function planQuestion(row: BoardRow, plan: MergePlan, conflicts: readonly string[]): string {
	const parts = [plural(plan.files.length, "file")];
	if (plan.commits > 0) parts.unshift(plural(plan.commits, "commit"));
	if (plan.uncommitted.length > 0)
		parts.push(`after committing its ${plural(plan.uncommitted.length, "uncommitted change")} on ${plan.branch}`);
	const warning =
		conflicts.length > 0
			? `; will conflict in ${conflicts.map(clean).join(", ")} (nothing changes then, and the row is asked to catch up)`
			: "";
	return `Merge ${clean(row.name)} (${plan.branch}) into ${clean(plan.into)}: ${parts.join(", ")}${warning}?`;
}
