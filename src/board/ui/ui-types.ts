/** The narrow slices of pi's theme and keybindings the dashboard uses (so tests can fake them), plus small shared helpers. */
import type { ThemeColor } from "@earendil-works/pi-coding-agent";
import { Input, type Keybinding, truncateToWidth } from "@earendil-works/pi-tui";

export interface UiTheme {
	fg(color: ThemeColor, text: string): string;
	bold(text: string): string;
}

export interface KeyMatcher {
	matches(data: string, keybinding: Keybinding): boolean;
}

/** Pads or truncates (styled) text to exactly `width` columns. */
export function fit(text: string, width: number): string {
	if (width <= 0) return "";
	return truncateToWidth(text, width, "…", true);
}

/** An Input holding `value` with the cursor at its end (setValue keeps the cursor at 0). */
export function inputWith(value: string): Input {
	const input = new Input({ prompt: "" });
	if (value) input.handleInput(`\x1b[200~${value}\x1b[201~`);
	return input;
}

export function message(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}
