/**
 * The dashboard's one key table: every action, its key and its description. Navigation, confirm and
 * cancel are pi keybinding ids, so both matching and every hint follow the user's remapping
 * (`keys.getKeys`); board actions are single letters. Help, hints and input handling all read this.
 */
import type { Keybinding } from "@earendil-works/pi-tui";
import type { KeyMatcher } from "../view-model/ui-types.ts";

export type KeySpec = { binding: Keybinding } | { literal: string };

export const KEYS = {
	up: { binding: "tui.select.up" },
	down: { binding: "tui.select.down" },
	pageUp: { binding: "tui.select.pageUp" },
	pageDown: { binding: "tui.select.pageDown" },
	confirm: { binding: "tui.select.confirm" },
	cancel: { binding: "tui.select.cancel" },
	submit: { binding: "tui.input.submit" },
	newLine: { binding: "tui.input.newLine" },
	tab: { binding: "tui.input.tab" },
	dispatch: { literal: "n" },
	reply: { literal: "r" },
	followUp: { literal: "f" },
	stop: { literal: "s" },
	archive: { literal: "a" },
	showArchived: { literal: "A" },
	rename: { literal: "R" },
	pin: { literal: "p" },
	filter: { literal: "/" },
	transcript: { literal: "t" },
	diff: { literal: "d" },
	removeWorktree: { literal: "w" },
	compare: { literal: "c" },
	merge: { literal: "m" },
	mark: { literal: " " },
	attach: { literal: "o" },
	back: { literal: "b" },
	settings: { literal: "S" },
	top: { literal: "g" },
	end: { literal: "G" },
	help: { literal: "?" },
	quit: { literal: "q" },
	yes: { literal: "y" },
	no: { literal: "n" },
} as const satisfies Record<string, KeySpec>;

export type Action = keyof typeof KEYS;

export function keyMatches(keys: KeyMatcher, data: string, action: Action): boolean {
	const spec: KeySpec = KEYS[action];
	return "binding" in spec ? keys.matches(data, spec.binding) : data === spec.literal;
}

/** What the user presses for an action, as configured ("esc", "ctrl+c/escape", "r"). */
export function keyLabel(keys: KeyMatcher, action: Action): string {
	const spec: KeySpec = KEYS[action];
	if (!("binding" in spec)) return spec.literal === " " ? "space" : spec.literal;
	const bound = keys.getKeys?.(spec.binding) ?? [];
	return bound.length > 0 ? bound.join("/") : "(unbound)";
}

export const HELP: ReadonlyArray<readonly [Action | readonly Action[], string]> = [
	[["up", "down", "pageUp", "pageDown"], "move selection / scroll / page"],
	["confirm", "peek the selected row"],
	["dispatch", "new agent: multi-line prompt, then name/cwd/model/thinking/worktree"],
	["reply", "reply: steers a working row, answers a question, resumes a finished row"],
	["followUp", "reply as a follow-up after the working row's current turn"],
	["stop", "stop the row's run (confirm)"],
	["archive", "archive / unarchive the row"],
	["showArchived", "show / hide archived rows"],
	["rename", "rename the row"],
	["pin", "pin / unpin the row"],
	["filter", "filter by text and s:<state>"],
	["transcript", "transcript of the row's session (current branch, live)"],
	["diff", "diff of a worktree row against its branch point"],
	["removeWorktree", "remove the row's worktree (confirm)"],
	["compare", "compare the row's attempt set: states, files, overlaps; space marks one, d diffs it"],
	["merge", "merge a finished worktree row into the main checkout (shows the plan, confirm)"],
	["attach", "attach: switch this pi session to the row's session"],
	["back", "back to the session you attached from (also /agent-board back)"],
	["settings", "board settings: strip, notifications"],
	[["top", "end"], "top / end in transcript and diff"],
	["help", "this help"],
	["cancel", "back; closes the board from the list"],
];

export function helpKey(keys: KeyMatcher, entry: Action | readonly Action[]): string {
	return (typeof entry === "string" ? [entry] : entry).map((action) => keyLabel(keys, action)).join(" ");
}

/**
 * One hint line from [action, label] pairs, within `width` columns. Entries are dropped from the end of
 * the list, but the help hint (last) is always kept so `?` stays discoverable at any width.
 */
export function hintLine(keys: KeyMatcher, entries: ReadonlyArray<readonly [Action, string]>, width: number): string {
	const parts = entries.map(([action, label]) => `${keyLabel(keys, action)} ${label}`);
	const helpIndex = entries.findIndex(([action]) => action === "help");
	const help = helpIndex >= 0 ? parts.splice(helpIndex, 1)[0] : undefined;
	const tail = help ? [help] : [];
	while (parts.length > 0 && [...parts, ...tail].join("  ").length > width) parts.pop();
	return [...parts, ...tail].join("  ");
}
