/**
 * The keys that act on one row, shared by the list (the selected row) and peek (the open row): one
 * entry per key with its help, its hint and why it cannot act on this row now, so both views, their
 * hint lines, their help and the status line a disabled key writes all come from here.
 */
import type { BoardRow } from "../engine/types.ts";
import { clean } from "../view-model/row-text.ts";
import { CompareView } from "./compare-view.ts";
import { ConfirmView } from "./confirm-view.ts";
import { ConsoleView } from "./console-view.ts";
import type { Action } from "./keys.ts";
import { startMerge } from "./merge-flow.ts";
import { removeWorktree } from "./remove-worktree.ts";
import { RenameView } from "./rename-view.ts";
import { isLive, ROW_DISABLED } from "./row-disabled.ts";
import { ReplyView } from "./reply-view.ts";
import type { Host, KeyEntry } from "./view.ts";

import { DiffView, TranscriptView } from "./viewer-view.ts";

export interface RowActionOptions {
	/** Which of these keys show in the view's hint line (all show in help). */
	hints: readonly Action[];
	/** Called after the row was archived (peek closes). */
	onArchived?(): void;
}

export function rowActions(host: Host, current: () => BoardRow | undefined, options: RowActionOptions): KeyEntry[] {
	const service = host.deps.service;
	const on = (fn: (row: BoardRow) => void) => () => {
		const row = current();
		if (row) fn(row);
	};
	const why = (reason: (row: BoardRow) => string | undefined) => () => {
		const row = current();
		return row ? reason(row) : "no row selected";
	};
	const entries: (KeyEntry & { keys: Action })[] = [
		{
			keys: "reply",
			help: "reply: steers a working row, answers its question, resumes a finished row",
			hint: "reply",
			run: on((row) => host.push(new ReplyView(host, row.id))),
		},
		{
			keys: "followUp",
			help: "reply as a follow-up after the working row's current turn",
			hint: "follow-up",
			disabled: why(ROW_DISABLED.followUp),
			run: on((row) => host.push(new ReplyView(host, row.id, { followUp: true }))),
		},
		{
			keys: "stop",
			help: "stop the row's run (confirm)",
			hint: "stop",
			disabled: why(ROW_DISABLED.stop),
			run: on((row) =>
				host.push(
					new ConfirmView(host, `Stop ${clean(row.name)}?`, () =>
						host.run(`stopped ${clean(row.name)}`, row.id, () => service.stop(row.id)),
					),
				),
			),
		},
		{
			keys: "open",
			help: "open: a live console on a running row (it keeps running); attach (switch this pi session to the row's) otherwise",
			hint: "open",
			run: on((row) =>
				isLive(row) ? host.push(new ConsoleView(host, row.id)) : host.close({ kind: "attach", row }),
			),
		},
		{
			keys: "transcript",
			help: "transcript of the row's session (current branch, follows a live run)",
			hint: "transcript",
			run: on((row) => host.push(new TranscriptView(host, row.id))),
		},
		{
			keys: "diff",
			help: "diff of a worktree row against its branch point",
			hint: "diff",
			disabled: why(ROW_DISABLED.diff),
			run: on((row) => host.push(new DiffView(host, { row: row.id }))),
		},
		{
			keys: "compare",
			help: "compare the row's attempt set: states, files, overlaps; space marks one, d diffs it, m merges, k keeps one",
			hint: "compare",
			disabled: why(ROW_DISABLED.compare),
			run: on((row) => host.push(new CompareView(host, row.id))),
		},
		{
			keys: "merge",
			help: "merge a finished worktree row into the main checkout (shows the plan and any conflict first)",
			hint: "merge",
			disabled: why(ROW_DISABLED.merge),
			run: on((row) => startMerge(host, row)),
		},
		{
			keys: "removeWorktree",
			help: "remove the row's worktree (confirm)",
			disabled: why(ROW_DISABLED.removeWorktree),
			run: on((row) =>
				host.push(
					new ConfirmView(host, `Remove worktree ${row.worktreePath ?? ""}?`, () => removeWorktree(host, row)),
				),
			),
		},
		{
			keys: "archive",
			help: "archive / unarchive the row",
			hint: "archive",
			run: on((row) => {
				void host.run(row.archived ? `unarchived ${clean(row.name)}` : `archived ${clean(row.name)}`, row.id, () =>
					row.archived ? service.unarchive(row.id) : service.archive(row.id),
				);
				options.onArchived?.();
			}),
		},
		{ keys: "rename", help: "rename the row", run: on((row) => host.push(new RenameView(host, row))) },
		{
			keys: "pin",
			help: "pin / unpin the row (pinned rows list first)",
			run: on(
				(row) =>
					void host.run(row.pinned ? `unpinned ${clean(row.name)}` : `pinned ${clean(row.name)}`, row.id, () =>
						service.pin(row.id, !row.pinned),
					),
			),
		},
	];
	return entries.map((entry) => ({
		...entry,
		actsOnRow: true,
		hint: options.hints.includes(entry.keys) ? entry.hint : undefined,
	}));
}
