/**
 * Compare one attempt set: each attempt's state, diff stats, touched files and overlaps. States follow
 * the feed at once; files and overlaps (the engine lists the store and runs git) are re-read at most
 * every few seconds, with a trailing reload so a run's end is never missed. Diff and merge of an
 * attempt open over this view, so the user comes back to it.
 */
import { visibleWidth } from "@earendil-works/pi-tui";
import type { AttemptRowView, AttemptSetView, BoardRow } from "../engine/types.ts";
import { clean, formatDiff, STATE_GLYPH } from "../view-model/row-text.ts";
import { fit, message } from "../view-model/ui-types.ts";
import { keyMatches } from "./keys.ts";
import { startKeep } from "./keep-flow.ts";
import { startMerge } from "./merge-flow.ts";
import { ROW_DISABLED } from "./row-disabled.ts";
import { type Host, type KeyEntry, Lines, View } from "./view.ts";
import { DiffView } from "./viewer-view.ts";

/** How often, at most, feed reports re-run the set's compare (a full list and git per attempt). */
const COMPARE_RELOAD_MS = 3000;

export class CompareView extends View {
	private set: AttemptSetView = { rows: [] };
	private selected = 0;
	private marked: string | undefined;
	private loading = true;
	private readonly rowId: string;
	private reloadTimer: ReturnType<typeof setTimeout> | undefined;

	constructor(host: Host, rowId: string) {
		super(host);
		this.rowId = rowId;
		this.addChild(new Lines((width) => this.draw(width)));
		void this.reload();
	}

	/** Re-reads the set (on open, after a merge, and throttled after feed reports). */
	async reload(): Promise<void> {
		try {
			this.setData(await this.deps.service.compare(this.rowId));
		} catch (error) {
			this.host.setStatus(`compare failed: ${message(error)}`);
		}
		this.host.changed();
	}

	setData(set: AttemptSetView): void {
		const keep = this.set.rows[this.selected]?.row.id;
		this.set = set;
		this.loading = false;
		const index = set.rows.findIndex((entry) => entry.row.id === keep);
		this.selected = index >= 0 ? index : Math.min(this.selected, Math.max(0, set.rows.length - 1));
	}

	override onRows(ids: readonly string[]): void {
		if (!this.set.rows.some((entry) => ids.includes(entry.row.id))) return;
		this.set = {
			...this.set,
			rows: this.set.rows.map((entry) => ({ ...entry, row: this.deps.feed.row(entry.row.id) ?? entry.row })),
		};
		this.reloadTimer ??= setTimeout(() => {
			this.reloadTimer = undefined;
			void this.reload();
		}, COMPARE_RELOAD_MS);
	}

	override dispose(): void {
		if (this.reloadTimer) clearTimeout(this.reloadTimer);
		this.reloadTimer = undefined;
	}

	selectedRow(): BoardRow | undefined {
		return this.set.rows[this.selected]?.row;
	}

	keyTable(): KeyEntry[] {
		const last = () => Math.max(0, this.set.rows.length - 1);
		return [
			{
				keys: ["up", "down"],
				help: "select an attempt",
				run: (data) =>
					(this.selected = Math.max(
						0,
						Math.min(last(), this.selected + (keyMatches(this.deps.keys, data, "up") ? -1 : 1)),
					)),
			},
			{
				keys: "mark",
				help: "mark the selected attempt (d then diffs it against another)",
				hint: "mark",
				run: () => {
					const id = this.selectedRow()?.id;
					this.marked = this.marked === id ? undefined : id;
				},
			},
			{
				keys: "diff",
				help: "diff of the marked attempt against the selected one",
				hint: "diff marked",
				run: () => this.requestDiff(),
			},
			{
				keys: "merge",
				help: "merge the selected attempt (the plan, and any conflict, first)",
				hint: "merge",
				disabled: () => this.whyNot(ROW_DISABLED.merge),
				run: () => {
					const row = this.selectedRow();
					if (row) startMerge(this.host, row, () => void this.reload());
				},
			},
			{
				keys: "keep",
				help: "keep this one: merge the selected attempt, then archive the others and remove their worktrees (the plan first; uncommitted work is asked about again)",
				hint: "keep this one",
				disabled: () => this.whyNot(ROW_DISABLED.keep),
				run: () => {
					const row = this.selectedRow();
					if (row) startKeep(this.host, row, () => void this.reload());
				},
			},
			{ keys: ["cancel", "quit"], help: "back", hint: "back", keep: true, run: () => this.host.pop(this) },
			{ keys: "help", help: "this help", hint: "help", run: () => this.host.help(this) },
		];
	}

	private whyNot(reason: (row: BoardRow) => string | undefined): string | undefined {
		const row = this.selectedRow();
		return row ? reason(row) : "no attempt selected";
	}

	private requestDiff(): void {
		const selected = this.selectedRow();
		const marked = this.set.rows.find((entry) => entry.row.id === this.marked)?.row;
		if (!selected || !marked || marked.id === selected.id) {
			this.host.setStatus("mark one attempt, select another, then diff");
			return;
		}
		this.host.push(new DiffView(this.host, { a: marked, b: selected }));
	}

	private draw(width: number): string[] {
		const theme = this.deps.theme;
		const lines = [fit(this.header(), width)];
		if (this.loading) lines.push(fit(theme.fg("muted", "Loading attempts…"), width));
		else if (this.set.rows.length === 0) lines.push(fit(theme.fg("muted", "No attempts."), width));
		// Files and overlaps of every attempt when they fit; else of the selected one only.
		const full = this.set.rows.flatMap((entry, i) => this.entryLines(entry, i === this.selected, width, true));
		if (full.length + 1 <= this.host.bodyRows()) return [...lines, ...full];
		return [
			...lines,
			...this.set.rows.flatMap((entry, i) =>
				this.entryLines(entry, i === this.selected, width, i === this.selected),
			),
		];
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
		if (this.set.repo) parts.push(clean(this.set.repo));
		return `${theme.fg("accent", theme.bold(title))} ${theme.fg("muted", parts.join(" · "))}`;
	}

	private entryLines(entry: AttemptRowView, selected: boolean, width: number, details: boolean): string[] {
		const theme = this.deps.theme;
		const { row, files, overlaps } = entry;
		const cursor = selected ? theme.fg("accent", ">") : " ";
		const mark = this.marked === row.id ? theme.fg("warning", "*") : " ";
		const index = row.attempt ? `#${row.attempt.index}` : "";
		const state = row.merged
			? theme.fg("success", `merged → ${clean(row.merged.into)}`)
			: `${STATE_GLYPH[row.state]} ${row.state}`;
		const overlap = overlaps.length > 0 ? theme.fg("warning", "!overlap") : "";
		const stats =
			formatDiff(row, this.deps.diffCache?.get(row) ?? row.diff) ||
			(files.length > 0 ? `${files.length}f` : "no diff");
		const name = clean(row.name);
		const fixed = [`${cursor}${mark}${index}`, state, stats, overlap, row.id].filter(Boolean).join("  ");
		const room = width - visibleWidth(fixed) - 2;
		const head = room >= 8 ? `${fixed}  ${fit(name, room).trimEnd()}` : fixed;
		const lines = [fit(selected ? theme.bold(head) : head, width)];
		if (!details) return lines;
		const indent = "     ";
		if (files.length > 0) lines.push(fit(theme.fg("muted", `${indent}files: ${files.map(clean).join(", ")}`), width));
		for (const o of overlaps)
			lines.push(fit(theme.fg("warning", `${indent}overlap: ${clean(o.file)} (with ${o.rows.join(", ")})`), width));
		if (selected && row.summary) lines.push(fit(theme.fg("dim", `${indent}${clean(row.summary)}`), width));
		return lines;
	}
}
