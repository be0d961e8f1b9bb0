/** Why an action cannot act on a row now: one reason per action, for the keys of every view that acts on rows. */
import { notOver } from "../../../runner/life/phase.mjs";
import type { BoardRow } from "../engine/types.ts";
import { clean } from "../view-model/row-text.ts";
import type { Action } from "./keys.ts";

/** A row whose run is not over (live, or waiting): `o` opens its console, not attach. */
export function isLive(row: BoardRow): boolean {
	return notOver(row);
}

/** Why a row's action cannot run now: each returns the reason, or undefined when it can. */
export const ROW_DISABLED = {
	followUp: (row: BoardRow) => (row.alive ? undefined : `${clean(row.name)} is not running: r replies (a new run)`),
	stop: (row: BoardRow) => (row.alive ? undefined : `${clean(row.name)} is not running`),
	diff: (row: BoardRow) => (row.worktreePath ? undefined : `${clean(row.name)} has no worktree: no diff`),
	compare: (row: BoardRow) =>
		row.attempt || row.worktreePath ? undefined : `${clean(row.name)} is not an attempt: nothing to compare`,
	merge: (row: BoardRow) => {
		const name = clean(row.name);
		if (row.merged) return `${name} is already merged into ${clean(row.merged.into)}`;
		if (!row.worktreePath) return `${name} has no worktree: nothing to merge`;
		if (isLive(row))
			return `${name} is still ${row.state === "queued" ? "queued" : "running"}: merge it when it is done (or stop it)`;
		return undefined;
	},
	keep: (row: BoardRow) => {
		if (!row.attempt) return `${clean(row.name)} is not an attempt of a set: merge it with m`;
		if (isLive(row)) return `${clean(row.name)} is still running: keep it when it is done`;
		return undefined;
	},
	removeWorktree: (row: BoardRow) => {
		if (!row.worktreePath) return `${clean(row.name)} has no worktree`;
		if (isLive(row)) return `${clean(row.name)} is still running: stop it first`;
		return undefined;
	},
} satisfies Partial<Record<Action, (row: BoardRow) => string | undefined>>;
