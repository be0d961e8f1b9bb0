/** Plain-text forms of attempt sets, merge plans and merge results (subcommands, LLM tools). */
import type { KeepPlan, KeepResult } from "../engine/keep-attempt.ts";
import type { AttemptSetView, BoardRow, MergePlan, MergeResult } from "../engine/types.ts";
import { describeOverlaps } from "../engine/git/overlap.ts";
import { plain } from "../view-model/plain.ts";
import { attemptText, formatDiff, mergedText } from "../view-model/row-text.ts";

export { attemptText, mergedText } from "../view-model/row-text.ts";

function list(items: readonly string[], max = 8): string {
	const shown = items.slice(0, max).map(plain).join(", ");
	return items.length > max ? `${shown}, … (${items.length} in all)` : shown;
}

/** Extra `show` lines for attempt, merge and overlap state. */
export function attemptDetail(row: BoardRow): string[] {
	const lines: string[] = [];
	if (row.attempt) lines.push(`attempt:   ${attemptText(row.attempt)}`);
	if (row.merged) lines.push(`merged:    ${mergedText(row.merged)} (${new Date(row.merged.at).toISOString()})`);
	if (row.overlaps?.length) lines.push(`overlaps:  ${plain(describeOverlaps(row.overlaps))}`);
	return lines;
}

export function formatAttemptSet(set: AttemptSetView): string {
	const head = set.setId
		? `attempt set ${set.setId}`
		: `row ${set.rows[0]?.row.id ?? ""} (not part of an attempt set)`;
	const lines = [`${head}${set.repo ? ` · ${plain(set.repo)}` : ""}`];
	for (const { row, files, overlaps } of set.rows) {
		const index = row.attempt ? `#${row.attempt.index} ` : "";
		const state = row.merged ? `merged into ${plain(row.merged.into)}` : row.state;
		const marker = overlaps.length > 0 ? " !overlap" : "";
		lines.push(`${index}${row.id}  ${state}  ${formatDiff(row) || "no diff"}${marker}  ${plain(row.name)}`);
		if (files.length > 0) lines.push(`    files:    ${list(files)}`);
		if (overlaps.length > 0) lines.push(`    overlaps: ${plain(describeOverlaps(overlaps))}`);
		if (row.state !== "working" && row.summary) lines.push(`    summary:  ${plain(row.summary).slice(0, 160)}`);
	}
	return lines.join("\n");
}

export function formatPlan(plan: MergePlan): string {
	const lines = [`merge ${plan.branch} into ${plain(plan.into)} (${plan.head.slice(0, 12)}) in ${plain(plan.repo)}`];
	if (plan.uncommitted.length > 0)
		lines.push(
			`  first commit ${plan.uncommitted.length} uncommitted change(s) on ${plan.branch}: ${list(plan.uncommitted.map((l) => l.slice(3)))}`,
		);
	lines.push(`  ${plan.commits} commit(s) on the branch; files: ${list(plan.files) || "none"}`);
	return lines.join("\n");
}

/** Result text; a conflict is an error (exit 1 headless), so it comes back as `error`. */
export function formatMergeResult(result: MergeResult, rowId: string): { text: string; error?: boolean } {
	const plan = formatPlan(result.plan);
	if (result.status === "planned") return { text: `${plan}\n(dry run: nothing was changed)` };
	const committed = result.committed
		? `\ncommitted the worktree's changes on ${result.plan.branch} as ${result.committed.slice(0, 12)}`
		: "";
	if (result.status === "conflict") {
		return {
			error: true,
			text: [
				`merge of row ${rowId} into ${plain(result.plan.into)} conflicts in: ${list(result.files, 20)}`,
				`nothing in the main checkout was changed.${committed}`,
				`ask the row to bring its branch up to date and resolve them, then merge again:`,
				`  /agent-board reply ${rowId} ${plain(result.followUp)}`,
			].join("\n"),
		};
	}
	const how = result.fastForward ? "fast-forward" : "merge commit";
	return {
		text: `${plan}${committed}\nmerged row ${rowId} into ${plain(result.plan.into)}: ${result.commit.slice(0, 12)} (${how})\nits worktree ${plain(result.plan.worktreePath)} is kept; remove it with /agent-board remove-worktree ${rowId}`,
	};
}

function attemptName(row: BoardRow): string {
	return row.attempt ? `#${row.attempt.index} ${row.id}` : row.id;
}

/** What keep will do: the merge (or that it is merged), and each other attempt with its uncommitted work. */
export function formatKeepPlan(plan: KeepPlan): string {
	const lines = [`keep ${attemptName(plan.keep)} (${plain(plan.keep.name)})`];
	if (plan.merge)
		lines.push(
			...formatPlan(plan.merge)
				.split("\n")
				.map((line) => `  ${line}`),
		);
	else if (plan.keep.merged) lines.push(`  already merged: ${mergedText(plan.keep.merged)}`);
	for (const other of plan.others) {
		const dirty =
			other.uncommitted.length > 0
				? `; ${other.uncommitted.length} uncommitted change(s) (${list(other.uncommitted, 5)}): its worktree stays unless --force`
				: "";
		lines.push(
			`  then archive ${attemptName(other.row)}${other.row.worktreePath ? ` and remove its worktree ${plain(other.row.worktreePath)}` : ""}${dirty}`,
		);
	}
	if (plan.others.length === 0) lines.push("  no other attempt to clear");
	return lines.join("\n");
}

/** What keep did; a conflict is an error (exit 1 headless), as merge's is. */
export function formatKeepResult(result: KeepResult, rowId: string): { text: string; error?: boolean } {
	if (result.status === "conflict") return { ...formatMergeResult(result.merge, rowId), error: true };
	const lines = result.merge
		? [
				formatMergeResult(result.merge, rowId)
					.text.split("\n")
					.filter((line) => !line.startsWith("its worktree"))
					.join("\n"),
			]
		: [`${rowId} was merged already`];
	lines.push(
		`archived ${result.archived.length ? result.archived.join(", ") : "none"}; removed the worktrees of ${result.removed.length ? result.removed.join(", ") : "none"}`,
	);
	for (const refused of result.refused) lines.push(`kept the worktree of ${refused.id}: ${plain(refused.reason)}`);
	return { text: lines.join("\n") };
}
