/** The grouped row list (our own: pi-tui's SelectList has no group headers or aligned columns). */
import type { ThemeColor } from "@earendil-works/pi-coding-agent";
import type { BoardRow } from "../types.ts";
import type { Dashboard } from "./dashboard.ts";
import { fit, type UiTheme } from "../view-model/ui-types.ts";
import { formatRowLine, rowLineParts } from "../view-model/row-text.ts";

/** Needs input is the accent (the board waits on the user), not a warning. */
export const STATE_COLOR: Record<BoardRow["state"], ThemeColor> = {
	needs_input: "accent",
	working: "success",
	queued: "muted",
	failed: "error",
	error: "error",
	stopped: "muted",
	completed: "text",
	idle: "dim",
};

export function listLines(d: Dashboard, width: number, theme: UiTheme, body: number): string[] {
	if (d.visibleRows.length === 0) {
		const why = d.filter ? "No rows match the filter (esc clears it)." : "No agents yet. Press n to dispatch one.";
		return [fit(theme.fg("muted", why), width)];
	}
	const now = d.now();
	const selectedId = d.selectedRow()?.id;
	// Items map one-to-one to lines: place the window first, then format only the visible lines.
	const selectedLine = Math.max(0, d.items.findIndex((item) => item.kind === "row" && item.row.id === selectedId));
	if (selectedLine < d.scroll + 1) d.scroll = Math.max(0, selectedLine - 1);
	if (selectedLine >= d.scroll + body) d.scroll = selectedLine - body + 1;
	d.scroll = Math.max(0, Math.min(d.scroll, Math.max(0, d.items.length - body)));
	const context = d.lineContext();
	const cache = d.deps.diffCache;
	// Only the rows on screen ask the async diff cache for fresh stats.
	if (cache) context.diff = (row) => cache.get(row);
	const out: string[] = [];
	for (const item of d.items.slice(d.scroll, d.scroll + body)) {
		if (item.kind === "header") {
			out.push(fit(theme.fg("muted", theme.bold(`${item.label} (${item.count})`)), width));
			continue;
		}
		const row = item.row;
		const selected = row.id === selectedId;
		const parts = formatRowLine(rowLineParts(row, now, context), width - 1, d.layout);
		const pointer = selected ? theme.fg("accent", ">") : " ";
		const head = theme.fg(STATE_COLOR[row.state], parts.head);
		const name = selected ? theme.bold(parts.name) : parts.name;
		// formatRowLine already fitted the plain parts to width - 1; styling adds no columns.
		out.push(`${pointer}${head}${name}${theme.fg("muted", parts.summary)}${theme.fg("dim", parts.right)}`);
	}
	return out;
}
