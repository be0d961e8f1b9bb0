/**
 * The /agent-board component: one focused component with internal modes (list, peek, transcript,
 * diff, dispatch, text dialogs, confirm, settings, help). Rows come from the shared BoardFeed (no
 * polling here); a 1 s tick only repaints ages. Drawing is in render*.ts, dialogs in
 * dashboard-dialogs.ts. The grouped list is our own code: pi-tui's SelectList has no group headers
 * or column layout.
 */
import type { Focusable, SettingsList, TUI } from "@earendil-works/pi-tui";
import type { BoardRow, BoardService } from "../types.ts";
import type { BoardFeed } from "../view-model/feed.ts";
import type { CompareView } from "./compare-view.ts";
import { compareRowsChanged, openCompare, startMerge } from "./dashboard-attempts.ts";
import { type Confirm, type DialogState, handleConfirm, handleSettings, handleTextDialog, openSettings, openText } from "./dashboard-dialogs.ts";
import { handleDispatch, openDispatch } from "./dashboard-dispatch.ts";
import type { DiffCache } from "../view-model/diff-cache.ts";
import { handleViewer } from "./dashboard-viewer.ts";
import type { DispatchForm } from "./dispatch-form.ts";
import { keyMatches } from "./key-table.ts";
import type { BoardSettings } from "../presence/notify.ts";
import type { DispatchPrefs } from "../view-model/prefs.ts";
import { renderDashboard } from "./render.ts";
import { ScrollWindow } from "./scroll-window.ts";
import type { TranscriptEntry } from "../view-model/transcript.ts";
import { type KeyMatcher, message, type UiTheme } from "../view-model/ui-types.ts";
import { buildListItems, type LineContext, type ListItem, type RowLayout, rowItems, rowLayout, rowLineParts } from "../view-model/row-text.ts";

export type DashboardResult = { kind: "close" } | { kind: "attach"; row: BoardRow } | { kind: "back" };

export type Mode = "list" | "peek" | "transcript" | "diff" | "compare" | "dispatch" | "filter" | "reply" | "rename" | "confirm" | "settings" | "help";

export interface DashboardDeps {
	service: BoardService;
	feed: BoardFeed;
	/** Host of the Editor components (pi's TUI). */
	tui: TUI;
	theme: UiTheme;
	keys: KeyMatcher;
	requestRender(): void;
	done(result: DashboardResult): void;
	/** Terminal height, for the scroll window. */
	height(): number;
	cwd: string;
	home?: string;
	models: readonly string[];
	prefs: DispatchPrefs;
	savePrefs(prefs: DispatchPrefs): Promise<void>;
	settings?: BoardSettings;
	saveSettings?(settings: BoardSettings): void;
	readTranscript(row: BoardRow): Promise<TranscriptEntry[]>;
	readDiff(row: BoardRow): Promise<string[]>;
	/** pi's diff renderer (numbered diff text to coloured lines); plain colouring when absent. */
	renderDiff?(text: string): string;
	diffCache?: DiffCache;
	/** Row this pi session is attached to, and whether `b` can go back to where we came from. */
	attachedId?: string;
	canGoBack?: boolean;
	now?: () => number;
	tickMs?: number;
}

export class Dashboard implements Focusable {
	mode: Mode = "list";
	/** Mode to return to when a dialog or overlay closes. */
	back: Mode = "list";
	/** Help has its own return mode so it never overwrites a viewer's way back. */
	helpBack: Mode = "list";
	rows: readonly BoardRow[] = [];
	items: ListItem[] = [];
	visibleRows: BoardRow[] = [];
	/** Column widths over the visible rows; recomputed only when the rows or the filter change. */
	layout: RowLayout = rowLayout([]);
	selected = 0;
	scroll = 0;
	filter = "";
	showArchived = false;
	status = "";
	form: DispatchForm | undefined;
	dialog: DialogState | undefined;
	settingsList: SettingsList | undefined;
	confirm: Confirm | undefined;
	transcript: TranscriptEntry[] = [];
	/** Bumped whenever the transcript or diff content is re-read. */
	viewerRevision = 0;
	diffLines: string[] = [];
	/** The diff viewer shows two attempts against each other instead of one row's worktree diff. */
	attemptDiff: { a: string; b: string; title: string } | undefined;
	compare: CompareView | undefined;
	/** Transcript/diff stick to the end while the user has not scrolled up, so a live run stays in view. */
	viewer = new ScrollWindow();
	/** Row shown in peek/transcript/diff, kept by id so a refresh keeps the view on it. */
	focusId: string | undefined;
	/** A row just dispatched: the cursor moves to it as soon as it is in the list. */
	pendingSelect: string | undefined;
	private _focused = false;
	private timer: ReturnType<typeof setInterval> | undefined;
	private unsubscribe: (() => void) | undefined;
	private unsubscribeDiff: (() => void) | undefined;
	private cache: { width: number; lines: string[] } | undefined;

	readonly deps: DashboardDeps;

	constructor(deps: DashboardDeps) {
		this.deps = deps;
	}

	/** Focusable: the focused editor draws pi's cursor marker, so IME candidates appear at the caret. */
	get focused(): boolean {
		return this._focused;
	}

	set focused(value: boolean) {
		this._focused = value;
		this.syncFocus();
	}

	syncFocus(): void {
		if (this.dialog) this.dialog.editor.focused = this._focused;
		if (this.form) this.form.focused = this._focused && this.mode === "dispatch";
	}

	now(): number {
		return this.deps.now ? this.deps.now() : Date.now();
	}

	lineContext(): LineContext {
		const cache = this.deps.diffCache;
		return { home: this.deps.home, attachedId: this.deps.attachedId, diff: cache ? (row) => cache.peek(row) : undefined };
	}

	/** Follows the shared feed; the tick repaints ages without reading the store. */
	async start(): Promise<void> {
		this.unsubscribe = this.deps.feed.subscribe((ids) => void this.onFeed(ids));
		this.unsubscribeDiff = this.deps.diffCache?.subscribe(() => this.diffUpdated());
		await this.deps.feed.start();
		this.onRows();
		this.timer = setInterval(() => this.changed(), this.deps.tickMs ?? 1000);
	}

	dispose(): void {
		this.unsubscribe?.();
		this.unsubscribe = undefined;
		this.unsubscribeDiff?.();
		this.unsubscribeDiff = undefined;
		this.compare?.dispose();
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
	}

	private async onFeed(ids: readonly string[]): Promise<void> {
		this.onRows();
		const row = this.focusRow();
		if (this.mode === "compare") compareRowsChanged(this, ids);
		else if (row && this.viewedIds(row).some((id) => ids.includes(id))) await this.reloadViewer(row);
		this.changed();
	}

	private onRows(): void {
		if (this.deps.feed.lastError) this.status = `refresh failed: ${this.deps.feed.lastError}`;
		this.rows = this.deps.feed.rows();
		this.rebuild();
		this.changed();
	}

	/** A diff-cache result arrived for a row: its column width may change. */
	diffUpdated(): void {
		this.rebuild();
		this.changed();
	}

	/** Rows whose change makes the open viewer stale: the two attempts of an attempt diff, else the row. */
	private viewedIds(row: BoardRow): string[] {
		return this.mode === "diff" && this.attemptDiff ? [this.attemptDiff.a, this.attemptDiff.b] : [row.id];
	}

	async reloadViewer(row: BoardRow): Promise<void> {
		if (this.mode === "transcript") this.transcript = await this.deps.readTranscript(row);
		else if (this.mode === "diff" && this.attemptDiff) this.diffLines = await this.deps.service.compareDiff(this.attemptDiff.a, this.attemptDiff.b).catch(() => this.diffLines);
		else if (this.mode === "diff") this.diffLines = await this.deps.readDiff(row);
		this.viewerRevision += 1;
	}

	rebuild(): void {
		const current = this.pendingSelect ?? this.visibleRows[this.selected]?.id;
		this.items = buildListItems(this.rows, { filter: this.filter, showArchived: this.showArchived });
		this.visibleRows = rowItems(this.items);
		const now = this.now();
		const context = this.lineContext();
		this.layout = rowLayout(this.visibleRows.map((row) => rowLineParts(row, now, context)));
		const index = current ? this.visibleRows.findIndex((row) => row.id === current) : -1;
		if (index >= 0 && current === this.pendingSelect) this.pendingSelect = undefined;
		this.selected = index >= 0 ? index : Math.min(this.selected, Math.max(0, this.visibleRows.length - 1));
	}

	changed(): void {
		this.cache = undefined;
		this.deps.requestRender();
	}

	setStatus(text: string): void {
		this.status = text;
		this.changed();
	}

	selectedRow(): BoardRow | undefined {
		return this.visibleRows[this.selected];
	}

	/** The row board actions apply to: the open row in peek/transcript/diff, else the selection. */
	focusRow(): BoardRow | undefined {
		if (this.focusId && this.mode !== "list") return this.deps.feed.row(this.focusId);
		return this.selectedRow();
	}

	render(width: number): string[] {
		if (this.cache && this.cache.width === width) return this.cache.lines;
		const lines = renderDashboard(this, width);
		this.cache = { width, lines };
		return lines;
	}

	invalidate(): void {
		this.cache = undefined;
	}

	/** Runs a service action, reports failures on the status line, then re-reads that row only. */
	run(label: string, id: string, action: () => Promise<unknown>): Promise<void> {
		return action().then(
			async () => {
				this.status = label;
				await this.deps.feed.refresh([id]);
				this.changed();
			},
			(error: unknown) => this.setStatus(`${label} failed: ${message(error)}`),
		);
	}

	handleInput(data: string): void {
		const keys = this.deps.keys;
		// A status line answers the last action; the next key in the list or peek retires it.
		if (this.mode === "list" || this.mode === "peek") this.status = "";
		switch (this.mode) {
			case "help":
				this.mode = this.helpBack;
				break;
			case "dispatch":
				handleDispatch(this, data);
				break;
			case "compare":
				if (keyMatches(keys, data, "help")) {
					this.helpBack = "compare";
					this.mode = "help";
				} else this.compare?.handleInput(data);
				break;
			case "filter":
			case "reply":
			case "rename":
				handleTextDialog(this, data);
				break;
			case "confirm":
				handleConfirm(this, data);
				break;
			case "settings":
				handleSettings(this, data);
				break;
			case "transcript":
			case "diff":
				handleViewer(this, data);
				break;
			default:
				if (keyMatches(keys, data, "cancel") || keyMatches(keys, data, "quit")) {
					if (this.mode === "peek") this.mode = "list";
					else if (this.filter && !keyMatches(keys, data, "quit")) {
						this.filter = "";
						this.rebuild();
					} else this.deps.done({ kind: "close" });
				} else if (this.mode === "list") this.handleList(data);
				else this.handleRowAction(data);
		}
		this.syncFocus();
		this.changed();
	}

	page(): number {
		return Math.max(1, this.deps.height() - 8);
	}

	private handleList(data: string): void {
		const keys = this.deps.keys;
		const last = Math.max(0, this.visibleRows.length - 1);
		if (keyMatches(keys, data, "up")) this.selected = Math.max(0, this.selected - 1);
		else if (keyMatches(keys, data, "down")) this.selected = Math.min(last, this.selected + 1);
		else if (keyMatches(keys, data, "pageUp")) this.selected = Math.max(0, this.selected - this.page());
		else if (keyMatches(keys, data, "pageDown")) this.selected = Math.min(last, this.selected + this.page());
		else if (keyMatches(keys, data, "filter")) openText(this, "filter", this.filter);
		else if (keyMatches(keys, data, "showArchived")) {
			this.showArchived = !this.showArchived;
			this.rebuild();
		} else if (keyMatches(keys, data, "confirm")) {
			const row = this.selectedRow();
			if (!row) return;
			this.focusId = row.id;
			this.mode = "peek";
			void this.deps.service.markViewed(row.id).catch(() => undefined);
		} else this.handleRowAction(data);
	}

	/** Single-letter board actions shared by list and peek. */
	private handleRowAction(data: string): void {
		const keys = this.deps.keys;
		const is = (action: Parameters<typeof keyMatches>[2]) => keyMatches(keys, data, action);
		if (is("help")) {
			this.helpBack = this.mode;
			this.mode = "help";
			return;
		}
		if (is("dispatch")) return openDispatch(this);
		if (is("settings")) return openSettings(this);
		if (is("back")) {
			if (this.deps.canGoBack) this.deps.done({ kind: "back" });
			else this.setStatus("not attached: nothing to go back to");
			return;
		}
		const row = this.focusRow();
		if (!row) return;
		const service = this.deps.service;
		this.focusId = row.id;
		if (is("reply") || is("followUp")) openText(this, "reply", "", { followUp: is("followUp") });
		else if (is("rename")) openText(this, "rename", row.name);
		else if (is("stop")) {
			if (!row.alive) this.setStatus(`${row.name} is not running`);
			else this.ask(`Stop ${row.name}?`, () => this.run(`stopped ${row.name}`, row.id, () => service.stop(row.id)));
		} else if (is("archive")) {
			void this.run(row.archived ? `unarchived ${row.name}` : `archived ${row.name}`, row.id, () => (row.archived ? service.unarchive(row.id) : service.archive(row.id)));
			if (this.mode === "peek") this.mode = "list";
		} else if (is("pin")) void this.run(row.pinned ? `unpinned ${row.name}` : `pinned ${row.name}`, row.id, () => service.pin(row.id, !row.pinned));
		else if (is("removeWorktree")) {
			if (!row.worktreePath) this.setStatus(`${row.name} has no worktree`);
			else this.ask(`Remove worktree ${row.worktreePath}?`, () => this.removeWorktree(row));
		} else if (is("transcript") || is("diff")) void this.openViewer(row, is("transcript") ? "transcript" : "diff");
		else if (is("compare")) openCompare(this, row);
		else if (is("merge")) startMerge(this, row);
		else if (is("attach")) {
			if (row.alive) this.ask(`${row.name} is running. Stop it and attach?`, () => service.stop(row.id).then((stopped) => this.deps.done({ kind: "attach", row: stopped })));
			else this.deps.done({ kind: "attach", row });
		}
	}

	/** git refuses to drop a worktree with changes; offer the forced removal as a second, explicit step. */
	async removeWorktree(row: BoardRow): Promise<void> {
		try {
			await this.deps.service.removeWorktree(row.id);
			await this.run(`removed worktree of ${row.name}`, row.id, async () => undefined);
		} catch (error) {
			// Question first: git's message is long and the line is cut at the terminal width.
			this.ask(`Force-remove the worktree, losing its changes? git: ${message(error).replace(/\s+/g, " ")}`, () =>
				this.run(`force-removed worktree of ${row.name}`, row.id, () => this.deps.service.removeWorktree(row.id, { force: true })),
			);
			this.changed();
		}
	}

	ask(messageText: string, action: () => Promise<void>): void {
		this.back = this.mode === "peek" || this.mode === "compare" ? this.mode : "list";
		this.confirm = { message: messageText, action };
		this.mode = "confirm";
	}

	private async openViewer(row: BoardRow, mode: "transcript" | "diff"): Promise<void> {
		this.back = this.mode === "peek" ? "peek" : "list";
		this.focusId = row.id;
		this.attemptDiff = undefined;
		this.viewer.reset();
		this.mode = mode;
		await this.reloadViewer(row);
		this.changed();
	}
}
