/**
 * Attempts inside the dashboard: the compare view of a row's attempt set, the diff of two attempts in
 * the dashboard's diff viewer, and merge (plan first, confirm, then merge; a conflict opens a reply to
 * the row with the follow-up that asks it to bring its branch up to date). The engine does the work
 * (`service.compare`, `compareDiff`, `merge`); this only sequences it.
 */
import type { BoardRow, MergePlan } from "../types.ts";
import { CompareView } from "./compare-view.ts";
import type { Dashboard } from "./dashboard.ts";
import { openText } from "./dashboard-dialogs.ts";
import { plain } from "../commands/plain.ts";
import { message } from "../view-model/ui-types.ts";

export function openCompare(d: Dashboard, row: BoardRow): void {
	const view = new CompareView({
		theme: d.deps.theme,
		keys: d.deps.keys,
		onDiff: (a, b) => void openAttemptDiff(d, a, b),
		onMerge: (target) => startMerge(d, target),
		onClose: () => {
			d.compare?.dispose();
			d.compare = undefined;
			d.mode = "list";
		},
		setStatus: (text) => d.setStatus(text),
		diff: d.deps.diffCache ? (target) => d.deps.diffCache?.get(target) : undefined,
	});
	d.compare = view;
	d.focusId = row.id;
	d.mode = "compare";
	void reloadCompare(d);
}

/** How often, at most, feed reports re-run the set's compare (a full list and git per attempt). */
const COMPARE_RELOAD_MS = 3000;

/**
 * The feed reported rows: states of the set's rows show at once from the feed; files and overlaps
 * (the engine's compare lists the store and runs git) are re-read at most every few seconds, with a
 * trailing reload so a run's end is never missed. Running attempts report up to 4 times a second.
 */
export function compareRowsChanged(d: Dashboard, ids: readonly string[]): void {
	const view = d.compare;
	if (!view || !view.ids().some((id) => ids.includes(id))) return;
	view.updateRows((id) => d.deps.feed.row(id));
	view.scheduleReload(COMPARE_RELOAD_MS, () => void reloadCompare(d));
}

/** Re-reads the set (on open, after a merge, and throttled after feed reports). */
export async function reloadCompare(d: Dashboard): Promise<void> {
	const view = d.compare;
	const id = d.focusId;
	if (!view || !id) return;
	try {
		view.setData(await d.deps.service.compare(id));
	} catch (error) {
		d.status = `compare failed: ${message(error)}`;
	}
	d.changed();
}

async function openAttemptDiff(d: Dashboard, a: BoardRow, b: BoardRow): Promise<void> {
	d.attemptDiff = { a: a.id, b: b.id, title: `${label(a)} vs ${label(b)}` };
	d.setStatus("loading diff…");
	try {
		d.diffLines = await d.deps.service.compareDiff(a.id, b.id);
	} catch (error) {
		d.attemptDiff = undefined;
		d.setStatus(`diff failed: ${message(error)}`);
		return;
	}
	d.back = "compare";
	d.viewer.reset();
	d.viewerRevision += 1;
	d.mode = "diff";
	d.setStatus("");
}

function label(row: BoardRow): string {
	return row.attempt ? `#${row.attempt.index} ${row.id}` : row.id;
}

function planQuestion(row: BoardRow, plan: MergePlan): string {
	const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
	const parts = [plural(plan.files.length, "file")];
	if (plan.commits > 0) parts.unshift(plural(plan.commits, "commit"));
	if (plan.uncommitted.length > 0) parts.push(`after committing its ${plural(plan.uncommitted.length, "uncommitted change")} on ${plan.branch}`);
	return `Merge ${plain(row.name)} (${plan.branch}) into ${plain(plan.into)}: ${parts.join(", ")}?`;
}

/** Asks the engine for the plan (nothing changes), then confirms; errors land on the status line. */
export function startMerge(d: Dashboard, row: BoardRow): void {
	if (!row.worktreePath) {
		d.setStatus(`${row.name} has no worktree: nothing to merge`);
		return;
	}
	const from = d.mode;
	d.setStatus(`planning the merge of ${row.name}…`);
	d.deps.service.merge(row.id, { dryRun: true }).then(
		(planned) => {
			d.setStatus("");
			const plan = planned.plan;
			// The confirm draws over the view the merge was asked from.
			d.mode = from;
			d.ask(planQuestion(row, plan), () => merge(d, row, plan.uncommitted.length > 0));
			d.changed();
		},
		(error: unknown) => d.setStatus(`merge: ${message(error)}`),
	);
}

async function merge(d: Dashboard, row: BoardRow, commit: boolean): Promise<void> {
	d.setStatus(`merging ${row.name}…`);
	let result;
	try {
		result = await d.deps.service.merge(row.id, { commit });
	} catch (error) {
		d.setStatus(`merge failed: ${message(error)}`);
		return;
	}
	await d.deps.feed.refresh([row.id]);
	if (d.mode === "compare") await reloadCompare(d);
	if (result.status === "conflict") {
		const files = result.files.map(plain).join(", ");
		d.status = `merge conflict in ${files}; the main checkout is unchanged. Send the row this follow-up, then merge again:`;
		// The follow-up asks the row to merge the current branch in and resolve; the user can edit it first.
		d.focusId = row.id;
		openText(d, "reply", result.followUp);
		d.changed();
		return;
	}
	if (result.status !== "merged") return;
	const how = result.fastForward ? "fast-forward" : "merge commit";
	d.setStatus(`merged ${row.name} into ${plain(result.plan.into)}: ${result.commit.slice(0, 12)} (${how})`);
	const path = row.worktreePath;
	if (path) d.ask(`Merged. Remove its worktree ${plain(path)}?`, () => d.removeWorktree(row));
	d.changed();
}
