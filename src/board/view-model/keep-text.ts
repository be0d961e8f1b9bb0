/**
 * The words of "keep this one": the question before the keep, what was done, and the second question
 * before worktrees with uncommitted work go. Both the TUI's compare (keep-flow.ts) and the web page ask
 * with these, so the two say the same.
 */
import type { KeepPlan, KeepResult } from "../engine/keep-attempt.ts";
import type { BoardRow } from "../engine/types.ts";
import { plural } from "./merge-text.ts";
import { clean } from "./row-text.ts";

export function attemptTag(row: BoardRow): string {
	return row.attempt ? `#${row.attempt.index}` : row.id;
}

function files(paths: readonly string[]): string {
	const shown = paths.slice(0, 4).map(clean).join(", ");
	return paths.length > 4 ? `${shown}, …` : shown;
}

export function keepQuestion(plan: KeepPlan): { question: string; details: string[] } {
	const { keep, merge, others } = plan;
	const what: string[] = [];
	if (merge) {
		const parts = [plural(merge.files.length, "file")];
		if (merge.uncommitted.length > 0)
			parts.push(`after committing its ${plural(merge.uncommitted.length, "uncommitted change")}`);
		what.push(`merge it into ${clean(merge.into)} (${parts.join(", ")})`);
	}
	if (others.length > 0)
		what.push(
			`archive ${others.map((other) => attemptTag(other.row)).join(", ")} and remove ${others.length === 1 ? "its worktree" : "their worktrees"}`,
		);
	const question = `Keep ${attemptTag(keep)} ${clean(keep.name)}: ${what.join(", then ") || "nothing left to do"}?`;
	const details = others
		.filter((other) => other.uncommitted.length > 0)
		.map(
			(other) =>
				`${attemptTag(other.row)} has ${plural(other.uncommitted.length, "uncommitted change")} (${files(other.uncommitted)}): you are asked again before they are lost`,
		);
	return { question, details };
}

/** What a keep did ("kept #1 x: merged into main as abc; archived 1, removed 1 worktree"). */
export function keptText(row: BoardRow, result: Extract<KeepResult, { status: "kept" }>): string {
	const merged = result.merge
		? `merged into ${clean(result.merge.plan.into)} as ${result.merge.commit.slice(0, 12)}; `
		: "";
	return `kept ${attemptTag(row)} ${clean(row.name)}: ${merged}archived ${result.archived.length}, removed ${plural(result.removed.length, "worktree")}`;
}

/** The attempts whose worktrees the keep left (uncommitted work, or git refused), and the question before forcing. */
export function refusedOf(result: Extract<KeepResult, { status: "kept" }>): {
	rows: BoardRow[];
	question?: string;
} {
	const refused = result.plan.others.filter((other) => result.refused.some((r) => r.id === other.row.id));
	if (refused.length === 0) return { rows: [] };
	const lost = refused
		.map((other) => `${attemptTag(other.row)}${other.uncommitted.length > 0 ? ` (${files(other.uncommitted)})` : ""}`)
		.join(", ");
	return {
		rows: refused.map((other) => other.row),
		question: `Remove the worktree${refused.length === 1 ? "" : "s"} of ${lost} anyway, losing ${refused.length === 1 ? "its" : "their"} uncommitted changes?`,
	};
}

/** What the forced removal after a keep did. */
export function forcedText(
	done: string,
	forced: { removed: string[]; refused: { id: string; reason: string }[] },
): string {
	const failed = forced.refused.map((r) => `${r.id}: ${r.reason}`).join("; ");
	return failed
		? `${done}; still kept: ${failed}`
		: `${done}; removed ${plural(forced.removed.length, "more worktree")}`;
}
