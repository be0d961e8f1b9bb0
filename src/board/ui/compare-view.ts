/**
 * Compare view of one attempt set: each attempt's state, diff stats, touched files and overlaps,
 * plus the diff between two attempts. A self-contained pi-tui component: the host supplies the data
 * (`service.compare`, `service.compareDiff`) and acts on the callbacks (merge, diff, close).
 */
import { visibleWidth } from "@earendil-works/pi-tui";
import type { AttemptRowView, AttemptSetView, BoardRow } from "../types.ts";
import { plain, plainLines } from "./plain.ts";
import { fit, type KeyMatcher, type UiTheme } from "./ui-types.ts";
import { formatDiff, STATE_GLYPH } from "./view-model.ts";

export interface CompareViewDeps {
	theme: UiTheme;
	keys: KeyMatcher;
	/** Terminal rows available to the view. */
	height: () => number;
	/** Asked to load the diff between two attempts; answer with `showDiff`. */
	onDiff(a: BoardRow, b: BoardRow): void;
	/** The user pressed m on an attempt (the host confirms and merges). */
	onMerge(row: BoardRow): void;
	onClose(): void;
	requestRender(): void;
}

const HINTS = "up/down select  space mark  d diff marked vs selected  m merge  esc back";
const DIFF_HINTS = "up/down scroll  pgup/pgdn page  esc back to the set";

export class CompareView {
	private set: AttemptSetView = { rows: [] };
	private selected = 0;
	private marked: string | undefined;
	private diff: { title: string; lines: string[] } | undefined;
	private scroll = 0;
	status = "";

	constructor(private readonly deps: CompareViewDeps) {}

	setData(set: AttemptSetView): void {
		const keep = this.set.rows[this.selected]?.row.id;
		this.set = set;
		const index = set.rows.findIndex((entry) => entry.row.id === keep);
		this.selected = index >= 0 ? index : Math.min(this.selected, Math.max(0, set.rows.length - 1));
		this.deps.requestRender();
	}

	showDiff(title: string, lines: readonly string[]): void {
		this.diff = { title, lines: plainLines(lines.join("\n")).split("\n") };
		this.scroll = 0;
		this.deps.requestRender();
	}

	selectedRow(): BoardRow | undefined {
		return this.set.rows[this.selected]?.row;
	}

	handleInput(data: string): void {
		const keys = this.deps.keys;
		this.status = "";
		if (this.diff) {
			const page = Math.max(1, this.bodyHeight() - 2);
			if (keys.matches(data, "tui.select.cancel") || data === "q") this.diff = undefined;
			else if (keys.matches(data, "tui.select.up")) this.scroll = Math.max(0, this.scroll - 1);
			else if (keys.matches(data, "tui.select.down")) this.scroll += 1;
			else if (keys.matches(data, "tui.select.pageUp")) this.scroll = Math.max(0, this.scroll - page);
			else if (keys.matches(data, "tui.select.pageDown")) this.scroll += page;
			this.deps.requestRender();
			return;
		}
		const count = this.set.rows.length;
		if (keys.matches(data, "tui.select.cancel") || data === "q") return this.deps.onClose();
		if (keys.matches(data, "tui.select.up")) this.selected = Math.max(0, this.selected - 1);
		else if (keys.matches(data, "tui.select.down")) this.selected = Math.min(Math.max(0, count - 1), this.selected + 1);
		else if (data === " ") {
			const id = this.selectedRow()?.id;
			this.marked = this.marked === id ? undefined : id;
		} else if (data === "d") this.requestDiff();
		else if (data === "m") {
			const row = this.selectedRow();
			if (row?.merged) this.status = `${row.id} is already merged into ${plain(row.merged.into)}`;
			else if (row) this.deps.onMerge(row);
		}
		this.deps.requestRender();
	}

	private requestDiff(): void {
		const selected = this.selectedRow();
		const marked = this.set.rows.find((entry) => entry.row.id === this.marked)?.row;
		if (!selected || !marked || marked.id === selected.id) {
			this.status = "mark one attempt with space, select another, then press d";
			return;
		}
		this.status = "loading diff…";
		this.deps.onDiff(marked, selected);
	}

	private bodyHeight(): number {
		return Math.max(6, this.deps.height() - 4);
	}

	invalidate(): void {}

	render(width: number): string[] {
		const theme = this.deps.theme;
		const lines = [fit(this.header(), width)];
		const body = this.bodyHeight() - 3;
		if (this.diff) {
			const max = Math.max(0, this.diff.lines.length - body);
			this.scroll = Math.min(this.scroll, max);
			lines.push(fit(theme.fg("accent", plain(this.diff.title)), width));
			for (const line of this.diff.lines.slice(this.scroll, this.scroll + body - 1)) lines.push(fit(colorDiff(theme, line), width));
		} else {
			lines.push(...this.setLines(width).slice(0, body));
		}
		lines.push(fit(this.status ? theme.fg("muted", this.status) : "", width));
		lines.push(fit(theme.fg("dim", this.diff ? DIFF_HINTS : HINTS), width));
		return lines.map((line) => (visibleWidth(line) > width ? fit(line, width) : line));
	}

	private header(): string {
		const theme = this.deps.theme;
		const count = this.set.rows.length;
		const merged = this.set.rows.filter((entry) => entry.row.merged).length;
		const overlapping = this.set.rows.filter((entry) => entry.overlaps.length > 0).length;
		const title = this.set.setId ? `Attempt set ${this.set.setId}` : "Compare";
		const parts = [`${count} attempt${count === 1 ? "" : "s"}`];
		if (merged) parts.push(`${merged} merged`);
		if (overlapping) parts.push(`${overlapping} overlapping`);
		if (this.set.repo) parts.push(plain(this.set.repo));
		return `${theme.fg("accent", theme.bold(title))} ${theme.fg("muted", parts.join(" · "))}`;
	}

	private setLines(width: number): string[] {
		if (this.set.rows.length === 0) return [fit(this.deps.theme.fg("muted", "No attempts."), width)];
		const lines: string[] = [];
		this.set.rows.forEach((entry, i) => lines.push(...this.entryLines(entry, i === this.selected, width)));
		return lines;
	}

	private entryLines(entry: AttemptRowView, selected: boolean, width: number): string[] {
		const theme = this.deps.theme;
		const { row, files, overlaps } = entry;
		const cursor = selected ? theme.fg("accent", ">") : " ";
		const mark = this.marked === row.id ? theme.fg("warning", "*") : " ";
		const index = row.attempt ? `#${row.attempt.index}` : "";
		const state = row.merged ? theme.fg("success", `merged → ${plain(row.merged.into)}`) : `${STATE_GLYPH[row.state]} ${row.state}`;
		const overlap = overlaps.length > 0 ? theme.fg("warning", "!overlap") : "";
		const stats = formatDiff(row) || "no diff";
		const name = plain(row.name);
		const fixed = [`${cursor}${mark}${index}`, state, stats, overlap, row.id].filter(Boolean).join("  ");
		const room = width - visibleWidth(fixed) - 2;
		const head = room >= 8 ? `${fixed}  ${fit(name, room).trimEnd()}` : fixed;
		const lines = [fit(selected ? theme.bold(head) : head, width)];
		const indent = "     ";
		if (files.length > 0) lines.push(fit(theme.fg("muted", `${indent}files: ${files.map(plain).join(", ")}`), width));
		for (const o of overlaps) lines.push(fit(theme.fg("warning", `${indent}overlap: ${plain(o.file)} (with ${o.rows.join(", ")})`), width));
		if (selected && row.summary) lines.push(fit(theme.fg("dim", `${indent}${plain(row.summary)}`), width));
		return lines;
	}
}

function colorDiff(theme: UiTheme, line: string): string {
	if (line.startsWith("+") && !line.startsWith("+++")) return theme.fg("toolDiffAdded", line);
	if (line.startsWith("-") && !line.startsWith("---")) return theme.fg("toolDiffRemoved", line);
	if (line.startsWith("@@")) return theme.fg("accent", line);
	return line;
}
