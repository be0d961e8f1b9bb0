/**
 * The /agent-board component: one focused component with internal modes (list, peek, transcript,
 * diff, dispatch, dialogs, help). State and input handling live here; drawing is in render.ts.
 */
import { Input } from "@earendil-works/pi-tui";
import type { BoardRow, BoardService } from "../types.ts";
import { DispatchForm } from "./dispatch-form.ts";
import type { DispatchPrefs } from "./prefs.ts";
import { renderDashboard } from "./render.ts";
import { ScrollWindow } from "./scroll-window.ts";
import type { TranscriptEntry } from "./transcript.ts";
import { inputWith, type KeyMatcher, message, type UiTheme } from "./ui-types.ts";
import { buildListItems, type ListItem, type RowLayout, rowItems, rowLayout, rowLineParts } from "./view-model.ts";

export type DashboardResult = { kind: "close" } | { kind: "attach"; row: BoardRow };

export type Mode = "list" | "peek" | "transcript" | "diff" | "dispatch" | "filter" | "reply" | "rename" | "confirm" | "help";

export interface DashboardDeps {
	service: BoardService;
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
	readTranscript(row: BoardRow): Promise<TranscriptEntry[]>;
	readDiff(row: BoardRow): Promise<string[]>;
	now?: () => number;
	pollMs?: number;
}

export interface Confirm {
	message: string;
	action: () => Promise<void>;
}

export class Dashboard {
	mode: Mode = "list";
	/** Mode to return to when a dialog or overlay closes. */
	back: Mode = "list";
	/** Help has its own return mode so it never overwrites a viewer's way back. */
	helpBack: Mode = "list";
	rows: BoardRow[] = [];
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
	input = new Input({ prompt: "" });
	confirm: Confirm | undefined;
	transcript: TranscriptEntry[] = [];
	diffLines: string[] = [];
	/** Transcript/diff stick to the end while the user has not scrolled up, so a live run stays in view. */
	viewer = new ScrollWindow();
	/** Row shown in peek/transcript/diff, kept by id so a refresh keeps the view on it. */
	focusId: string | undefined;
	private lastVersion = "";
	private timer: ReturnType<typeof setInterval> | undefined;
	private polling = false;
	private cache: { width: number; lines: string[] } | undefined;

	readonly deps: DashboardDeps;

	constructor(deps: DashboardDeps) {
		this.deps = deps;
	}

	now(): number {
		return this.deps.now ? this.deps.now() : Date.now();
	}

	/** First load and then a version poll; re-lists only when the store changed. */
	async start(): Promise<void> {
		await this.poll();
		this.timer = setInterval(() => void this.poll(), this.deps.pollMs ?? 500);
	}

	dispose(): void {
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
	}

	async poll(): Promise<boolean> {
		if (this.polling) return false;
		this.polling = true;
		try {
			const version = await this.deps.service.version();
			if (version === this.lastVersion) return false;
			this.lastVersion = version;
			await this.reload();
			return true;
		} catch (error) {
			this.setStatus(`refresh failed: ${message(error)}`);
			return false;
		} finally {
			this.polling = false;
		}
	}

	async reload(): Promise<void> {
		this.rows = await this.deps.service.list({ includeArchived: true });
		this.rebuild();
		const row = this.focusRow();
		if (row && this.mode === "transcript") this.transcript = await this.deps.readTranscript(row);
		if (row && this.mode === "diff") this.diffLines = await this.deps.readDiff(row);
		this.changed();
	}

	rebuild(): void {
		const current = this.visibleRows[this.selected]?.id;
		this.items = buildListItems(this.rows, { filter: this.filter, showArchived: this.showArchived });
		this.visibleRows = rowItems(this.items);
		const now = this.now();
		this.layout = rowLayout(this.visibleRows.map((row) => rowLineParts(row, now, this.deps.home)));
		const index = current ? this.visibleRows.findIndex((row) => row.id === current) : -1;
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
		if (this.focusId && this.mode !== "list") return this.rows.find((row) => row.id === this.focusId);
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

	/** Runs a service action, reports failures on the status line, then refreshes. */
	run(label: string, action: () => Promise<unknown>): Promise<void> {
		return action().then(
			async () => {
				this.lastVersion = "";
				this.status = label;
				await this.poll();
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
				this.handleDispatch(data);
				break;
			case "filter":
			case "reply":
			case "rename":
				this.handleTextDialog(data);
				break;
			case "confirm":
				this.handleConfirm(data);
				break;
			case "transcript":
			case "diff":
				this.handleViewer(data);
				break;
			default:
				if (keys.matches(data, "tui.select.cancel") || data === "q") {
					if (this.mode === "peek") this.mode = "list";
					else if (this.filter && this.mode === "list" && data !== "q") {
						this.filter = "";
						this.rebuild();
					} else this.deps.done({ kind: "close" });
				} else if (this.mode === "list") this.handleList(data);
				else this.handleRowAction(data);
		}
		this.changed();
	}

	private handleList(data: string): void {
		const keys = this.deps.keys;
		const count = this.visibleRows.length;
		const page = Math.max(1, this.deps.height() - 6);
		if (keys.matches(data, "tui.select.up")) this.selected = Math.max(0, this.selected - 1);
		else if (keys.matches(data, "tui.select.down")) this.selected = Math.min(Math.max(0, count - 1), this.selected + 1);
		else if (keys.matches(data, "tui.select.pageUp")) this.selected = Math.max(0, this.selected - page);
		else if (keys.matches(data, "tui.select.pageDown")) this.selected = Math.min(Math.max(0, count - 1), this.selected + page);
		else if (data === "n") this.openDispatch();
		else if (data === "/") this.openText("filter", this.filter);
		else if (data === "A") {
			this.showArchived = !this.showArchived;
			this.rebuild();
		} else if (keys.matches(data, "tui.select.confirm")) {
			const row = this.selectedRow();
			if (!row) return;
			this.focusId = row.id;
			this.mode = "peek";
			void this.deps.service.markViewed(row.id).catch(() => undefined);
		} else this.handleRowAction(data);
	}

	/** Single-letter board actions shared by list and peek. */
	private handleRowAction(data: string): void {
		const row = this.focusRow();
		if (data === "?") {
			this.helpBack = this.mode;
			this.mode = "help";
			return;
		}
		if (data === "n") return this.openDispatch();
		if (!row) return;
		const service = this.deps.service;
		switch (data) {
			case "r":
				this.focusId = row.id;
				this.openText("reply", "");
				break;
			case "R":
				this.focusId = row.id;
				this.openText("rename", row.name);
				break;
			case "s":
				if (!row.alive) this.setStatus(`${row.name} is not running`);
				else this.ask(`Stop ${row.name}?`, () => this.run(`stopped ${row.name}`, () => service.stop(row.id)));
				break;
			case "a":
				void this.run(row.archived ? `unarchived ${row.name}` : `archived ${row.name}`, () => (row.archived ? service.unarchive(row.id) : service.archive(row.id)));
				if (this.mode === "peek") this.mode = "list";
				break;
			case "p":
				void this.run(row.pinned ? `unpinned ${row.name}` : `pinned ${row.name}`, () => service.pin(row.id, !row.pinned));
				break;
			case "w":
				if (!row.worktreePath) this.setStatus(`${row.name} has no worktree`);
				else this.ask(`Remove worktree ${row.worktreePath}?`, () => this.removeWorktree(row));
				break;
			case "t":
			case "d":
				void this.openViewer(row, data === "t" ? "transcript" : "diff");
				break;
			case "o":
				if (row.alive) this.ask(`${row.name} is running. Stop it and attach?`, () => service.stop(row.id).then((stopped) => this.deps.done({ kind: "attach", row: stopped })));
				else this.deps.done({ kind: "attach", row });
				break;
		}
	}

	/** git refuses to drop a worktree with changes; offer the forced removal as a second, explicit step. */
	private async removeWorktree(row: BoardRow): Promise<void> {
		try {
			await this.deps.service.removeWorktree(row.id);
			await this.run(`removed worktree of ${row.name}`, async () => undefined);
		} catch (error) {
			// Question first: git's message is long and the line is cut at the terminal width.
			this.ask(`Force-remove the worktree, losing its changes? git: ${message(error).replace(/\s+/g, " ")}`, () =>
				this.run(`force-removed worktree of ${row.name}`, () => this.deps.service.removeWorktree(row.id, { force: true })),
			);
			this.changed();
		}
	}

	private openDispatch(): void {
		this.back = this.mode;
		this.form = new DispatchForm(this.deps.models, this.deps.prefs, this.deps.prefs.cwd ?? this.deps.cwd);
		this.mode = "dispatch";
	}

	private handleDispatch(data: string): void {
		const form = this.form;
		if (!form) return;
		const outcome = form.handleInput(data, this.deps.keys);
		if (outcome === "cancel") this.mode = this.back;
		if (outcome !== "submit") return;
		const options = form.options();
		const prefs = form.prefs();
		Object.assign(this.deps.prefs, prefs);
		this.mode = "list";
		void this.deps.savePrefs(prefs).catch(() => undefined);
		void this.run(`dispatched ${options.name ?? options.prompt.slice(0, 40)}`, () => this.deps.service.dispatch(options));
	}

	private openText(mode: "filter" | "reply" | "rename", value: string): void {
		this.back = this.mode === "peek" ? "peek" : "list";
		this.input = inputWith(value);
		this.input.focused = true;
		this.mode = mode;
	}

	private handleTextDialog(data: string): void {
		const keys = this.deps.keys;
		const mode = this.mode;
		if (keys.matches(data, "tui.select.cancel")) {
			this.mode = this.back;
			return;
		}
		if (!keys.matches(data, "tui.select.confirm")) {
			this.input.handleInput(data);
			if (mode === "filter") {
				// Live filtering: the list narrows as the user types.
				this.filter = this.input.getValue();
				this.rebuild();
			}
			return;
		}
		const value = this.input.getValue().trim();
		const row = this.focusRow();
		this.mode = this.back;
		if (mode === "filter") {
			this.filter = value;
			this.rebuild();
		} else if (!row) {
			this.setStatus("no row selected");
		} else if (!value) {
			this.setStatus(mode === "reply" ? "empty reply not sent" : "name unchanged");
		} else if (mode === "reply") {
			void this.run(`replied to ${row.name}`, () => this.deps.service.reply(row.id, value));
		} else {
			void this.run(`renamed to ${value}`, () => this.deps.service.rename(row.id, value));
		}
	}

	private ask(messageText: string, action: () => Promise<void>): void {
		this.back = this.mode === "peek" ? "peek" : "list";
		this.confirm = { message: messageText, action };
		this.mode = "confirm";
	}

	private handleConfirm(data: string): void {
		const confirm = this.confirm;
		if (data === "y" || data === "Y" || this.deps.keys.matches(data, "tui.select.confirm")) {
			this.mode = this.back;
			this.confirm = undefined;
			if (confirm) void confirm.action().catch((error: unknown) => this.setStatus(`failed: ${message(error)}`));
		} else if (data === "n" || data === "N" || this.deps.keys.matches(data, "tui.select.cancel")) {
			this.mode = this.back;
			this.confirm = undefined;
		}
	}

	private async openViewer(row: BoardRow, mode: "transcript" | "diff"): Promise<void> {
		this.back = this.mode === "peek" ? "peek" : "list";
		this.focusId = row.id;
		this.viewer.reset();
		this.mode = mode;
		if (mode === "transcript") this.transcript = await this.deps.readTranscript(row);
		else this.diffLines = await this.deps.readDiff(row);
		this.changed();
	}

	private handleViewer(data: string): void {
		const keys = this.deps.keys;
		const page = Math.max(1, this.deps.height() - 6);
		if (keys.matches(data, "tui.select.cancel") || data === "q") this.mode = this.back;
		else if (keys.matches(data, "tui.select.up")) this.viewer.scroll(-1);
		else if (keys.matches(data, "tui.select.down")) this.viewer.scroll(1);
		else if (keys.matches(data, "tui.select.pageUp")) this.viewer.scroll(-page);
		else if (keys.matches(data, "tui.select.pageDown")) this.viewer.scroll(page);
		else if (data === "g") this.viewer.top();
		else if (data === "G") this.viewer.end();
		else if (data === "?") {
			this.helpBack = this.mode;
			this.mode = "help";
		}
	}
}
