/**
 * Colours for the board: pi's own theme getters (markdown, select list, settings list) when pi's
 * theme is live, as it is for an extension inside pi; built from the injected theme otherwise (tests).
 */
import {
	getMarkdownTheme,
	getSelectListTheme,
	getSettingsListTheme,
	type ThemeColor,
} from "@earendil-works/pi-coding-agent";
import type { EditorTheme, MarkdownTheme, SelectListTheme, SettingsListTheme } from "@earendil-works/pi-tui";
import type { RowState } from "../engine/types.ts";
import type { UiTheme } from "../view-model/ui-types.ts";

/** Needs input is the accent (the board waits on the user), not a warning. */
export const STATE_COLOR: Record<RowState, ThemeColor> = {
	needs_input: "accent",
	working: "success",
	queued: "muted",
	failed: "error",
	error: "error",
	stopped: "muted",
	completed: "text",
	idle: "dim",
};

/** pi's getter when its global theme is initialised (a call of one style function tells). */
function fromPi<T>(get: () => T, probe: (value: T) => unknown): T | undefined {
	try {
		const value = get();
		probe(value);
		return value;
	} catch {
		return undefined;
	}
}

function selectListTheme(theme: UiTheme): SelectListTheme {
	return (
		fromPi(getSelectListTheme, (t) => t.selectedText("x")) ?? {
			selectedPrefix: (text) => theme.fg("accent", text),
			selectedText: (text) => theme.fg("accent", text),
			description: (text) => theme.fg("muted", text),
			scrollInfo: (text) => theme.fg("dim", text),
			noMatch: (text) => theme.fg("warning", text),
		}
	);
}

export function editorTheme(theme: UiTheme): EditorTheme {
	return { borderColor: (text) => theme.fg("borderMuted", text), selectList: selectListTheme(theme) };
}

export function settingsTheme(theme: UiTheme): SettingsListTheme {
	return (
		fromPi(getSettingsListTheme, (t) => t.hint("x")) ?? {
			label: (text, selected) => (selected ? theme.fg("accent", text) : text),
			value: (text, selected) => (selected ? theme.fg("accent", text) : theme.fg("muted", text)),
			description: (text) => theme.fg("dim", text),
			cursor: theme.fg("accent", "→ "),
			hint: (text) => theme.fg("dim", text),
		}
	);
}

export function markdownTheme(theme: UiTheme): MarkdownTheme {
	return (
		fromPi(getMarkdownTheme, (t) => t.heading("x")) ?? {
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
		}
	);
}
