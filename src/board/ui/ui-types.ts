/** The narrow slices of pi's theme and keybindings the dashboard uses (so tests can fake them), plus small shared helpers. */
import type { ThemeColor } from "@earendil-works/pi-coding-agent";
import { type EditorTheme, type Keybinding, type MarkdownTheme, type SettingsListTheme, truncateToWidth } from "@earendil-works/pi-tui";
import { sanitizeText } from "../sanitize.ts";

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

/** Worker-supplied text for one line: no control sequences, whitespace runs folded. */
export function clean(text: string | undefined): string {
	return text ? sanitizeText(text).replace(/\s+/g, " ").trim() : "";
}

/** Worker-supplied text kept multi-line, control sequences removed. */
export function cleanBlock(text: string | undefined): string {
	return text ? sanitizeText(text, { multiline: true }) : "";
}

export function editorTheme(theme: UiTheme): EditorTheme {
	return {
		borderColor: (text) => theme.fg("borderMuted", text),
		selectList: {
			selectedPrefix: (text) => theme.fg("accent", text),
			selectedText: (text) => theme.fg("accent", text),
			description: (text) => theme.fg("muted", text),
			scrollInfo: (text) => theme.fg("dim", text),
			noMatch: (text) => theme.fg("warning", text),
		},
	};
}

export function settingsTheme(theme: UiTheme): SettingsListTheme {
	return {
		label: (text, selected) => (selected ? theme.fg("accent", text) : text),
		value: (text, selected) => (selected ? theme.fg("accent", text) : theme.fg("muted", text)),
		description: (text) => theme.fg("dim", text),
		cursor: theme.fg("accent", "→ "),
		hint: (text) => theme.fg("dim", text),
	};
}

/** Markdown styling from the theme's md* colours (pi's getMarkdownTheme needs its global theme). */
export function markdownTheme(theme: UiTheme): MarkdownTheme {
	return {
		heading: (text) => theme.fg("mdHeading", theme.bold(text)),
		link: (text) => theme.fg("mdLink", text),
		linkUrl: (text) => theme.fg("mdLinkUrl", text),
		code: (text) => theme.fg("mdCode", text),
		codeBlock: (text) => theme.fg("mdCodeBlock", text),
		codeBlockBorder: (text) => theme.fg("mdCodeBlockBorder", text),
		quote: (text) => theme.fg("mdQuote", text),
		quoteBorder: (text) => theme.fg("mdQuoteBorder", text),
		hr: (text) => theme.fg("mdHr", text),
		listBullet: (text) => theme.fg("mdListBullet", text),
		bold: (text) => theme.bold(text),
		italic: (text) => text,
		strikethrough: (text) => text,
		underline: (text) => text,
	};
}
