/**
 * Compare view of one attempt set: each attempt's state, diff stats, touched files and overlaps. The
 * host (the dashboard) supplies the data (`service.compare`) and acts on the callbacks: the diff of
 * two attempts opens in the dashboard's diff viewer (pi's diff renderer), merge goes through its
 * confirm. Keys come from the dashboard's key table, so they follow the user's keybindings.
 */
import { visibleWidth } from "@earendil-works/pi-tui";
import type { AttemptRowView, AttemptSetView, BoardRow, DiffStats } from "../types.ts";
import { keyMatches } from "./key-table.ts";
import { plain } from "../commands/plain.ts";
import { fit, type KeyMatcher, type UiTheme } from "../view-model/ui-types.ts";
import { formatDiff, STATE_GLYPH } from "../view-model/row-text.ts";

export interface CompareViewDeps {
	theme: UiTheme;
	keys: KeyMatcher;
	/** Asked to show the diff between two attempts (marked first, selected second). */
	onDiff(a: BoardRow, b: BoardRow): void;
	/** The user asked to merge an attempt (the host plans, confirms and merges). */
	onMerge(row: BoardRow): void;
	onClose(): void;
	/** One-line answers to a key ("mark one attempt first"), shown on the host's status line. */
	setStatus(text: string): void;
	/** Diff stats from the dashboard's async cache, when it has them. */
	diff?(row: BoardRow): DiffStats | undefined;
}

export class CompareView {
	private set: AttemptSetView = { rows: [] };
	private selected = 0;
	private marked: string | undefined;
	loading = true;
	private readonly deps: CompareViewDeps;
	private reloadTimer: ReturnType<typeof setTimeout> | undefined;

	constructor(deps: CompareViewDeps) {
		this.deps = deps;
	}

	setData(set: AttemptSetView): void {
		const keep = this.set.rows[this.selected]?.row.id;
		this.set = set;
		this.loading = false;
		const index = set.rows.findIndex((entry) => entry.row.id === keep);
		this.selected = index >= 0 ? index : Math.min(this.selected, Math.max(0, set.rows.length - 1));
	}

	ids(): string[] {
		return this.set.rows.map((entry) => entry.row.id);
	}

	/** Fresher rows (state, live text) without re-reading files and overlaps. */
	updateRows(lookup: (id: string) => BoardRow | undefined): void {
		this.set = { ...this.set, rows: this.set.rows.map((entry) => ({ ...entry, row: lookup(entry.row.id) ?? entry.row })) };
	}

	/** Runs `reload` once after `ms`; calls meanwhile join the pending one. */
	scheduleReload(ms: number, reload: () => void): void {
		this.reloadTimer ??= setTimeout(() => {
			this.reloadTimer = undefined;
			reload();
		}, ms);
	}

	dispose(): void {
		if (this.reloadTimer) clearTimeout(this.reloadTimer);
		this.reloadTimer = undefined;
	}

	selectedRow(): BoardRow | undefined {
		return this.set.rows[this.selected]?.row;
	}

	handleInput(data: string): void {
		const keys = this.deps.keys;
		const is = (action: Parameters<typeof keyMatches>[2]) => keyMatches(keys, data, action);
		const last = Math.max(0, this.set.rows.length - 1);
		if (is("cancel") || is("quit")) this.deps.onClose();
		else if (is("up")) this.selected = Math.max(0, this.selected - 1);
		else if (is("down")) this.selected = Math.min(last, this.selected + 1);
		else if (is("mark")) {
			const id = this.selectedRow()?.id;
			this.marked = this.marked === id ? undefined : id;
		} else if (is("diff")) this.requestDiff();
		else if (is("merge")) {
			const row = this.selectedRow();
			if (row?.merged) this.deps.setStatus(`${row.id} is already merged into ${plain(row.merged.into)}`);
			else if (row) this.deps.onMerge(row);
		}
	}

	private requestDiff(): void {
		const selected = this.selectedRow();
		const marked = this.set.rows.find((entry) => entry.row.id === this.marked)?.row;
		if (!selected || !marked || marked.id === selected.id) {
			this.deps.setStatus("mark one attempt, select another, then diff");
			return;
		}
		this.deps.onDiff(marked, selected);
	}

	render(width: number): string[] {
		const lines = [fit(this.header(), width), ...this.setLines(width)];
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
		const theme = this.deps.theme;
		if (this.loading) return [fit(theme.fg("muted", "Loading attempts…"), width)];
		if (this.set.rows.length === 0) return [fit(theme.fg("muted", "No attempts."), width)];
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
		const stats = formatDiff(row, this.deps.diff?.(row) ?? row.diff) || (files.length > 0 ? `${files.length}f` : "no diff");
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
