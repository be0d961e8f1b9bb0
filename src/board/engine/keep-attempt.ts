/**
 * "Keep this one" of an attempt set: merge the chosen attempt, then archive the others and remove
 * their worktrees. Built on the service's own actions (compare, merge, removeWorktree, archive), so
 * the board, the subcommand and any other UI run the same steps with the same refusals: nothing
 * changes while another attempt still runs; a worktree with uncommitted work is not removed (nor its
 * row archived) unless forced, as `remove-worktree` refuses it; a conflict merges nothing and
 * touches no other attempt.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { notOver } from "../../../runner/life/phase.mjs";
import { BoardError } from "../../../runner/life/reasons.mjs";
import type { BoardRow, BoardService, MergePlan, MergeResult } from "./types.ts";
import { inert } from "./sanitize.ts";

/** Another attempt of the set, and the uncommitted paths in its worktree (its removal needs force then). */
export interface KeepOther {
	row: BoardRow;
	uncommitted: string[];
}

export interface KeepPlan {
	keep: BoardRow;
	/** The merge to run; undefined when the attempt is merged already (keep then only clears the others). */
	merge?: MergePlan;
	/** The set's other attempts that still have a worktree or are not archived. */
	others: KeepOther[];
}

export type KeepResult =
	| { status: "conflict"; plan: KeepPlan; merge: Extract<MergeResult, { status: "conflict" }> }
	| {
			status: "kept";
			plan: KeepPlan;
			merge?: Extract<MergeResult, { status: "merged" }>;
			archived: string[];
			removed: string[];
			/** Worktrees left in place (uncommitted work, or git refused): their rows stay on the board. */
			refused: { id: string; reason: string }[];
	  };

export interface KeepOptions {
	/** Commit the kept attempt's uncommitted changes on its branch first (the user confirmed the plan). */
	commit?: boolean;
	/** Remove the other attempts' worktrees even with uncommitted work (the user confirmed losing it). */
	force?: boolean;
}

/** `git status --porcelain` paths of a worktree; none when it is gone. */
export function uncommittedIn(path: string | undefined): string[] {
	if (!path || !existsSync(path)) return [];
	try {
		const out = execFileSync("git", ["status", "--porcelain=v1", "-z", "--untracked-files=all"], {
			cwd: path,
			encoding: "utf8",
			stdio: ["ignore", "pipe", "pipe"],
			timeout: 15_000,
		});
		return out
			.split("\0")
			.filter(Boolean)
			.map((line) => line.slice(3));
	} catch {
		return [];
	}
}

function label(row: BoardRow): string {
	return row.attempt ? `#${row.attempt.index} (${row.id})` : row.id;
}

/** What keeping `id` will do, or why it cannot (nothing changes). */
export async function planKeep(service: BoardService, id: string): Promise<KeepPlan> {
	const keep = await service.get(id);
	if (!keep) throw new BoardError("no-such-row", `no such row: ${inert(id)}`);
	if (!keep.attempt)
		throw new BoardError(
			"invalid",
			`row ${id} is not an attempt: keep picks one attempt of a set (dispatch --count N starts one); merge a single row with merge`,
		);
	const set = await service.compare(id);
	const others = set.rows
		.map((entry) => entry.row)
		.filter((row) => row.id !== id && (row.worktreePath !== undefined || !row.archived));
	const busy = others.filter(notOver);
	if (busy.length > 0) {
		throw new BoardError(
			"busy",
			`attempt ${busy.map(label).join(", ")} ${busy.length === 1 ? "is" : "are"} still running: stop ${busy.length === 1 ? "it" : "them"} or wait, then keep ${label(keep)}. Nothing was changed`,
		);
	}
	const merge = keep.merged ? undefined : (await service.merge(id, { dryRun: true })).plan;
	return { keep, merge, others: others.map((row) => ({ row, uncommitted: uncommittedIn(row.worktreePath) })) };
}

/** Merges `id` (unless merged already), then removes the other attempts' worktrees and archives them. */
export async function keepAttempt(service: BoardService, id: string, options: KeepOptions = {}): Promise<KeepResult> {
	const plan = await planKeep(service, id);
	let merged: Extract<MergeResult, { status: "merged" }> | undefined;
	if (plan.merge) {
		const result = await service.merge(id, { commit: options.commit === true });
		if (result.status === "conflict") return { status: "conflict", plan, merge: result };
		if (result.status !== "merged") throw new Error(`merge of ${id} did not run (${result.status})`);
		merged = result;
	}
	const { archived, removed, refused } = await clearOthers(
		service,
		plan.others.map((other) => other.row),
		options.force === true,
	);
	return { status: "kept", plan, merge: merged, archived, removed, refused };
}

/** Removes each row's worktree (forced or not) and archives it; a refused removal leaves the row as it is. */
export async function clearOthers(
	service: BoardService,
	rows: readonly BoardRow[],
	force: boolean,
): Promise<{ archived: string[]; removed: string[]; refused: { id: string; reason: string }[] }> {
	const archived: string[] = [];
	const removed: string[] = [];
	const refused: { id: string; reason: string }[] = [];
	for (const row of rows) {
		if (row.worktreePath) {
			try {
				await service.removeWorktree(row.id, { force });
				removed.push(row.id);
			} catch (error) {
				refused.push({ id: row.id, reason: error instanceof Error ? error.message : String(error) });
				continue;
			}
		}
		if (!row.archived) {
			await service.archive(row.id);
			archived.push(row.id);
		}
	}
	return { archived, removed, refused };
}
