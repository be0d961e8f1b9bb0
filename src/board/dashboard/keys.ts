/**
 * The keys the board understands. Navigation, confirm, cancel and the editors' keys are pi keybinding
 * ids, so matching and every hint follow the user's remapping (`keys.getKeys`); board actions are
 * single letters. Which key does what in a view, with its help and hint, is that view's key table.
 */
import { type KeyId, type Keybinding, matchesKey } from "@earendil-works/pi-tui";
import type { KeyMatcher } from "../view-model/ui-types.ts";

/** A pi binding (with the key to use where the manager does not know the binding), a named key, or one character. */
export type KeySpec = { binding: Keybinding; fallback?: KeyId } | { key: KeyId } | { literal: string };

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
	sendFollowUp: { binding: "app.message.followUp", fallback: "alt+enter" },
	options: { key: "ctrl+o" },
	start: { literal: "s" },
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
	keep: { literal: "k" },
	mark: { literal: " " },
	open: { literal: "o" },
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

function bound(keys: KeyMatcher, spec: { binding: Keybinding }): string[] {
	return keys.getKeys?.(spec.binding) ?? [];
}

export function keyMatches(keys: KeyMatcher, data: string, action: Action): boolean {
	const spec: KeySpec = KEYS[action];
	if ("literal" in spec) return data === spec.literal;
	if ("key" in spec) return matchesKey(data, spec.key);
	if (keys.matches(data, spec.binding)) return true;
	// A manager without the app's bindings (tests, a bare TUI) still gets the documented default.
	return spec.fallback !== undefined && bound(keys, spec).length === 0 && matchesKey(data, spec.fallback);
}

/** What the user presses for an action, as configured ("escape/ctrl+c", "r", "space"); `first`: only the first key (hints). */
export function keyLabel(keys: KeyMatcher, action: Action, first = false): string {
	const spec: KeySpec = KEYS[action];
	if ("literal" in spec) return spec.literal === " " ? "space" : spec.literal;
	if ("key" in spec) return spec.key;
	const configured = bound(keys, spec);
	if (configured.length > 0) return first ? (configured[0] ?? "") : configured.join("/");
	return spec.fallback ?? "(unbound)";
}

/** Labels of several actions as one key column entry ("up down pageUp pageDown"). */
export function keysLabel(keys: KeyMatcher, actions: Action | readonly Action[], first = false): string {
	return (typeof actions === "string" ? [actions] : actions).map((action) => keyLabel(keys, action, first)).join(" ");
}

/**
 * One hint line from [label of keys, what] pairs within `width` columns. Entries are dropped from the
 * end, but the help hint (marked `keep`) always stays so `?` is discoverable at any width.
 */
export function hintLine(
	entries: ReadonlyArray<{ keys: string; label: string; keep?: boolean }>,
	width: number,
): string {
	const parts = entries.map((entry) => ({ text: `${entry.keys} ${entry.label}`, keep: entry.keep === true }));
	const fits = () => parts.map((part) => part.text).join("  ").length <= width;
	for (let i = parts.length - 1; i >= 0 && !fits(); i--) if (!parts[i]?.keep) parts.splice(i, 1);
	return parts.map((part) => part.text).join("  ");
}
