/**
 * The rows on screen of the grouped list (our own: pi-tui's SelectList has no group headers or
 * aligned columns). It formats only the items in its window, and counts them, so a test can prove a
 * repaint after one change touches what is on screen and nothing more.
 */
import type { Component } from "@earendil-works/pi-tui";
import type { ListModel } from "../view-model/list-model.ts";
import { fit } from "../view-model/ui-types.ts";
import { formatRowLine, type LineContext, rowLayout, rowLineParts } from "./row-line.ts";
import { STATE_COLOR } from "./theme.ts";
import type { Host } from "./view.ts";

export interface ListWindowSource {
	readonly model: ListModel;
	selectedId(): string | undefined;
	/** First item on screen (kept by the view as keys move the selection). */
	scrollTop(): number;
	/** Rows the window may draw. */
	windowRows(): number;
	emptyText(): string[];
}

/** The first item of a window of `rows` over `length` items that keeps `selected` on screen. */
export function windowStart(scroll: number, selected: number, rows: number, length: number): number {
	let start = scroll;
	if (selected >= 0 && selected < start + 1) start = Math.max(0, selected - 1);
	if (selected >= start + rows) start = selected - rows + 1;
	return Math.max(0, Math.min(start, Math.max(0, length - rows)));
}

export class ListWindow implements Component {
	/** Rows formatted since the window was made (tests and the bench read it). */
	formatted = 0;
	private readonly host: Host;
	private readonly source: ListWindowSource;

	constructor(host: Host, source: ListWindowSource) {
		this.host = host;
		this.source = source;
	}

	lineContext(): LineContext {
		const { home, attachedId, diffCache, overlaps, feed } = this.host.deps;
		// Only rows on screen ask the async diff cache for fresh stats.
		return {
			home,
			attachedId,
			diff: diffCache ? (row) => diffCache.get(row) : undefined,
			overlaps: overlaps ? (row) => overlaps.of(row) : undefined,
			targets: feed.anyRemote(),
		};
	}

	render(width: number): string[] {
		const theme = this.host.deps.theme;
		const { model } = this.source;
		if (model.rowCount === 0) return this.source.emptyText().map((line) => fit(theme.fg("muted", line), width));
		const rows = Math.max(1, this.source.windowRows());
		const selectedId = this.source.selectedId();
		const selectedItem = selectedId ? model.position(selectedId).item : -1;
		const start = windowStart(this.source.scrollTop(), selectedItem, rows, model.length);
		const items = model.items(start, start + rows);
		const now = this.host.now();
		const context = this.lineContext();
		const parts = new Map<string, ReturnType<typeof rowLineParts>>();
		for (const item of items) if (item.kind === "row") parts.set(item.row.id, rowLineParts(item.row, now, context));
		this.formatted += parts.size;
		const layout = rowLayout([...parts.values()]);
		return items.map((item) => {
			if (item.kind === "header") return fit(theme.fg("muted", theme.bold(`${item.label} (${item.count})`)), width);
			const row = item.row;
			const selected = row.id === selectedId;
			const line = formatRowLine(parts.get(row.id) ?? rowLineParts(row, now, context), width - 1, layout);
			const pointer = selected ? theme.fg("accent", ">") : " ";
			const name = selected ? theme.bold(line.name) : line.name;
			// formatRowLine already fitted the plain parts to width - 1; styling adds no columns.
			return `${pointer}${theme.fg(STATE_COLOR[row.state], line.head)}${name}${theme.fg("muted", line.summary)}${theme.fg("dim", line.right)}`;
		});
	}

	invalidate(): void {}
}
