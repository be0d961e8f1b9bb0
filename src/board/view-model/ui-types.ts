/** The narrow slices of pi's theme and keybindings the board's UIs use (so tests can fake them), plus small shared helpers. */
import type { ThemeColor } from "@earendil-works/pi-coding-agent";
import { type Keybinding, truncateToWidth } from "@earendil-works/pi-tui";

export interface UiTheme {
	fg(color: ThemeColor, text: string): string;
	bold(text: string): string;
}

export interface KeyMatcher {
	matches(data: string, keybinding: Keybinding): boolean;
	/** Configured keys of a binding, for hints (pi's KeybindingsManager has it). */
	getKeys?(keybinding: Keybinding): string[];
}

/** Pads or truncates (styled) text to exactly `width` columns. */
export function fit(text: string, width: number): string {
	if (width <= 0) return "";
	return truncateToWidth(text, width, "…", true);
}

export function message(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}
