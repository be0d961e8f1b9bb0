/**
 * The keys that act on one row, shared by the list (the selected row) and peek (the open row): one
 * entry per key with its help and hint, so both views and their help stay the same.
 */
import type { BoardRow } from "../engine/types.ts";
import { CompareView } from "./compare-view.ts";
import { ConfirmView } from "./confirm-view.ts";
import { ConsoleView } from "./console-view.ts";
import type { Action } from "./keys.ts";
import { startMerge } from "./merge-flow.ts";
import { removeWorktree } from "./remove-worktree.ts";
import { RenameView } from "./rename-view.ts";
import { ReplyView } from "./reply-view.ts";
import type { Host, KeyEntry } from "./view.ts";
import { DiffView, TranscriptView } from "./viewer-view.ts";
import { notOver } from "../../../runner/life/phase.mjs";

export interface RowActionOptions {
	/** Which of these keys show in the view's hint line (all show in help). */
	hints: readonly Action[];
	/** Called after the row was archived (peek closes). */
	onArchived?(): void;
}

/** A row whose run is not over (live, or waiting): `o` opens its console, not attach. */
export function isLive(row: BoardRow): boolean {
	return notOver(row);
}

export function rowActions(host: Host, current: () => BoardRow | undefined, options: RowActionOptions): KeyEntry[] {
	const service = host.deps.service;
	const on = (fn: (row: BoardRow) => void) => () => {
		const row = current();
		if (row) fn(row);
	};
	const has = (test: (row: BoardRow) => boolean) => () => {
		const row = current();
		return row !== undefined && test(row);
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
			hintIf: has((row) => row.alive),
			run: on((row) => host.push(new ReplyView(host, row.id, { followUp: true }))),
		},
		{
			keys: "stop",
			help: "stop the row's run (confirm)",
			hint: "stop",
			hintIf: has((row) => row.alive),
			run: on((row) => {
				if (!row.alive) host.setStatus(`${row.name} is not running`);
				else host.push(new ConfirmView(host, `Stop ${row.name}?`, () => host.run(`stopped ${row.name}`, row.id, () => service.stop(row.id))));
			}),
		},
		{
			keys: "open",
			help: "open: a live console on a running row (it keeps running); attach (switch this pi session to the row's) otherwise",
			hint: "open",
			run: on((row) => (isLive(row) ? host.push(new ConsoleView(host, row.id)) : host.close({ kind: "attach", row }))),
		},
		{ keys: "transcript", help: "transcript of the row's session (current branch, follows a live run)", hint: "transcript", run: on((row) => host.push(new TranscriptView(host, row.id))) },
		{
			keys: "diff",
			help: "diff of a worktree row against its branch point",
			hint: "diff",
			hintIf: has((row) => row.worktreePath !== undefined),
			run: on((row) => (row.worktreePath ? host.push(new DiffView(host, { row: row.id })) : host.setStatus(`${row.name} has no worktree: no diff`))),
		},
		{
			keys: "compare",
			help: "compare the row's attempt set: states, files, overlaps; space marks one, d diffs it, m merges",
			hint: "compare",
			hintIf: has((row) => row.attempt !== undefined),
			run: on((row) => host.push(new CompareView(host, row.id))),
		},
		{
			keys: "merge",
			help: "merge a finished worktree row into the main checkout (shows the plan and any conflict first)",
			hint: "merge",
			hintIf: has((row) => row.worktreePath !== undefined && !row.alive && !row.merged),
			run: on((row) => startMerge(host, row)),
		},
		{
			keys: "removeWorktree",
			help: "remove the row's worktree (confirm)",
			run: on((row) => {
				if (!row.worktreePath) host.setStatus(`${row.name} has no worktree`);
				else host.push(new ConfirmView(host, `Remove worktree ${row.worktreePath}?`, () => removeWorktree(host, row)));
			}),
		},
		{
			keys: "archive",
			help: "archive / unarchive the row",
			hint: "archive",
			run: on((row) => {
				void host.run(row.archived ? `unarchived ${row.name}` : `archived ${row.name}`, row.id, () => (row.archived ? service.unarchive(row.id) : service.archive(row.id)));
				options.onArchived?.();
			}),
		},
		{ keys: "rename", help: "rename the row", run: on((row) => host.push(new RenameView(host, row))) },
		{ keys: "pin", help: "pin / unpin the row (pinned rows list first)", run: on((row) => void host.run(row.pinned ? `unpinned ${row.name}` : `pinned ${row.name}`, row.id, () => service.pin(row.id, !row.pinned))) },
	];
	return entries.map((entry) => (options.hints.includes(entry.keys) ? entry : { ...entry, hint: undefined }));
}
