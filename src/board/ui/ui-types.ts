/** The narrow slices of pi's theme and keybindings the dashboard uses, so tests can fake them. */
import type { ThemeColor } from "@earendil-works/pi-coding-agent";
import { type Keybinding, truncateToWidth } from "@earendil-works/pi-tui";

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
