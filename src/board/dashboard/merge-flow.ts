/**
 * Merge from the board: the engine's plan and a conflict check computed off to the side come first,
 * in one question that says "will conflict in <files>" when it will; on yes the engine merges. A
 * conflict changes nothing and opens a reply to the row with the follow-up that asks it to bring its
 * branch up to date, over the view the merge was asked from, so closing it returns there.
 */
import type { BoardRow } from "../engine/types.ts";
import { planQuestion } from "../view-model/merge-text.ts";
import { clean } from "../view-model/row-text.ts";
import { message } from "../view-model/ui-types.ts";
import { ConfirmView } from "./confirm-view.ts";
import { removeWorktree } from "./remove-worktree.ts";
import { ReplyView } from "./reply-view.ts";
import type { Host } from "./view.ts";

// The plan's words live with the view-model, where the web page takes them too; keep-flow takes plural from here.
export { plural } from "../view-model/merge-text.ts";

/** Asks the engine for the plan and the conflict check (nothing changes), then confirms. */
export function startMerge(host: Host, row: BoardRow, after?: () => void): void {
	if (!row.worktreePath) {
		host.setStatus(`${row.name} has no worktree: nothing to merge`);
		return;
	}
	host.setStatus(`planning the merge of ${row.name}…`);
	const conflicts = host.deps.mergeConflicts ? host.deps.mergeConflicts(row).catch(() => []) : Promise.resolve([]);
	Promise.all([host.deps.service.merge(row.id, { dryRun: true }), conflicts]).then(
		([planned, files]) => {
			host.setStatus("");
			const plan = planned.plan;
			host.push(
				new ConfirmView(host, planQuestion(row, plan, files), () =>
					merge(host, row, plan.uncommitted.length > 0, after),
				),
			);
		},
		(error: unknown) => host.setStatus(`merge: ${message(error)}`),
	);
}

async function merge(host: Host, row: BoardRow, commit: boolean, after?: () => void): Promise<void> {
	host.setStatus(`merging ${row.name}…`);
	let result: Awaited<ReturnType<typeof host.deps.service.merge>>;
	try {
		result = await host.deps.service.merge(row.id, { commit });
	} catch (error) {
		host.setStatus(`merge failed: ${message(error)}`);
		return;
	}
	await host.deps.feed.refresh([row.id]);
	after?.();
	if (result.status === "conflict") {
		// The follow-up asks the row to merge the current branch in and resolve; the user can edit it first.
		host.push(new ReplyView(host, row.id, { text: result.followUp }));
		host.setStatus(
			`merge conflict in ${result.files.map(clean).join(", ")}; the main checkout is unchanged. Send the row this follow-up, then merge again:`,
		);
		return;
	}
	if (result.status !== "merged") return;
	const how = result.fastForward ? "fast-forward" : "merge commit";
	const path = row.worktreePath;
	if (path)
		host.push(new ConfirmView(host, `Merged. Remove its worktree ${clean(path)}?`, () => removeWorktree(host, row)));
	host.setStatus(`merged ${row.name} into ${clean(result.plan.into)}: ${result.commit.slice(0, 12)} (${how})`);
}
