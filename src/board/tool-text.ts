/** A row as the board's tools tell the model about it (loaded with the engine: pi's start-up needs only the tools' schemas). */
import { describeOverlaps } from "./engine/git/overlap.ts";
import type { BoardRow } from "./engine/types.ts";

export function describeRow(row: BoardRow): string {
	const parts = [`${row.id} [${row.state}] ${row.name}`, `  summary: ${row.summary}`];
	if (row.target) parts.push(`  target: ${row.target}`);
	if (row.question)
		parts.push(
			`  question: ${row.question}${row.questionOptions?.length ? ` (options: ${row.questionOptions.join(" | ")})` : ""}`,
		);
	if (row.supervisorNote) parts.push(`  ${row.supervisorNote}`);
	if (row.budget)
		parts.push(
			`  budget: ${row.budget.scope} ${row.budget.spent}/${row.budget.limit} ${row.budget.unit}${row.budget.paused ? " (paused)" : ""}`,
		);
	if (row.error && row.state !== "needs_input") parts.push(`  error: ${row.error}`);
	if (row.worktreePath) parts.push(`  worktree: ${row.worktreePath} (${row.branch ?? ""})`);
	if (row.attempt) parts.push(`  attempt: ${row.attempt.index}/${row.attempt.count} of ${row.attempt.setId}`);
	if (row.merged) parts.push(`  merged: into ${row.merged.into} as ${row.merged.commit.slice(0, 12)}`);
	if (row.overlaps?.length) parts.push(`  overlaps: ${describeOverlaps(row.overlaps)}`);
	return parts.join("\n");
}
