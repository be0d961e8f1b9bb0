/**
 * The board's first view: every row, grouped by state, with the selection, the filter (typed in
 * place, the list narrows as you type) and archived rows on request. Row keys act on the selection.
 */
import { Input } from "@earendil-works/pi-tui";
import type { BoardRow } from "../engine/types.ts";
import { ListModel } from "../view-model/list-model.ts";
import { clean } from "../view-model/row-text.ts";
import { fit, message } from "../view-model/ui-types.ts";
import { DispatchView } from "./dispatch-view.ts";
import { type Action, keyLabel, keyMatches, keysLabel } from "./keys.ts";
import { ListWindow, windowStart } from "./list-window.ts";
import { PeekView } from "./peek-view.ts";
import { rowActions } from "./row-actions.ts";
import { limitEntries, SETTINGS, SettingsView } from "./settings-view.ts";
import { policyEntries } from "./policy-settings.ts";
import { WEB_SETTING } from "./web-setting.ts";
import { notifyEntries } from "./notify-settings.ts";
import { type Host, type KeyEntry, Lines, View } from "./view.ts";
import { BoardSearch } from "./board-search.ts";
import { hitLine } from "./search-line.ts";

/** Mid-navigation: this soon after a key that moved the cursor. */
const NAVIGATING_MS = 3000;
/** How long after another row slid under the cursor a key on it is first questioned. */
const SLID_GRACE_MS = 1500;

function actionOf(entry: KeyEntry): Action {
	return typeof entry.keys === "string" ? entry.keys : (entry.keys[0] ?? "confirm");
}

export class ListView extends View {
	override readonly retiresStatus = true;
	readonly model = new ListModel();
	readonly window: ListWindow;
	private selected: string | undefined;
	/** Row index of the selection, so a vanished row hands the cursor to its neighbour. */
	private selectedIndex = 0;
	private scroll = 0;
	private filter = "";
	private showArchived = false;
	/** The filter being typed (one line, pi-tui's Input). */
	private filterInput: Input | undefined;
	/** The filter's words also search everything that ran; made on the first filter with words. */
	private search: BoardSearch | undefined;
	/** A row just dispatched: the cursor moves to it as soon as it is listed. */
	private pendingSelect: string | undefined;
	/**
	 * Until the user's first key (or the board's first fill is done), the cursor is on the first row of
	 * the top group, whatever order the rows arrive in.
	 */
	private cursorAtTop = true;
	/** When the user's last key moved the cursor: soon after, a change keeps the cursor's screen line, not its row. */
	private navigatedAt: number | undefined;
	/** When another row last slid under the cursor by itself (a change while navigating), and which. */
	private slid: { at: number; id: string } | undefined;

	constructor(host: Host) {
		super(host);
		this.window = new ListWindow(host, {
			model: this.model,
			selectedId: () => this.selected,
			scrollTop: () => this.scroll,
			windowRows: () => this.windowRows(),
			emptyText: () =>
				this.filter
					? [`No rows match the filter (${keyLabel(this.deps.keys, "cancel", true)} clears it).`]
					: [
							"No agents yet.",
							"  n      new agent: type a prompt, enter starts it",
							"  enter  peek a row · r reply · o open · s stop",
							"  ?      every key · q closes the board",
						],
		});
		this.addChild(this.window);
		this.addChild(new Lines((width) => this.hitLines(width)));
		this.addChild(new Lines((width) => this.filterLines(width)));
	}

	private options() {
		return { filter: this.filter, showArchived: this.showArchived, found: this.search?.ids() };
	}

	/** Where the selected row matched, when the search found it: one line under the list. */
	private hitLines(width: number): string[] {
		if (!this.search?.hasHits()) return [];
		const hit = this.search.hit(this.selected);
		return [hit ? hitLine(hit, width, this.deps.theme) : ""];
	}

	/** Builds the list from every row (on open, and when the feed re-read the whole store). */
	load(rows: Iterable<BoardRow>): void {
		this.model.reset(rows, this.options());
		this.settle();
	}

	override onRows(ids: readonly string[], relisted: boolean): void {
		const navigating = this.navigatedAt !== undefined && this.host.now() - this.navigatedAt < NAVIGATING_MS;
		const was =
			navigating && this.selected ? { id: this.selected, line: this.cursorLine(), scroll: this.scroll } : undefined;
		if (relisted) this.model.reset(this.deps.feed.rows(), this.options());
		else for (const id of ids) this.model.update(id, this.deps.feed.row(id));
		this.settle();
		if (was?.line === undefined || this.cursorLine() === was.line) return;
		// Mid-navigation the cursor keeps its screen line; the row now there is marked as having slid in.
		const row = this.model.rowNear(was.scroll + was.line);
		if (!row) return;
		this.scroll = was.scroll;
		this.selected = row.id;
		this.reveal();
		if (row.id !== was.id) this.slid = { at: this.host.now(), id: row.id };
	}

	/** The board's first fill is in: from now on the cursor stays on the row it is on. */
	firstFillDone(): void {
		this.cursorAtTop = false;
	}

	/** The screen line of the cursor in the list's window. */
	private cursorLine(): number | undefined {
		const item = this.selected ? this.model.position(this.selected).item : -1;
		if (item < 0) return undefined;
		return item - windowStart(this.scroll, item, Math.max(1, this.windowRows()), this.model.length);
	}

	/**
	 * After a change: the pending row takes the cursor, else (until the first key) the first row of the
	 * top group; a row that moved groups keeps the cursor; a vanished selection goes to its neighbour.
	 */
	private settle(): void {
		if (this.pendingSelect && this.model.has(this.pendingSelect)) {
			this.selected = this.pendingSelect;
			this.pendingSelect = undefined;
		} else if (this.cursorAtTop) this.selected = this.model.rowAt(0)?.id;
		if (!this.selected || !this.model.has(this.selected))
			this.selected = this.model.rowAt(Math.min(this.selectedIndex, this.model.rowCount - 1))?.id;
		this.reveal();
	}

	private reveal(): void {
		const at = this.selected ? this.model.position(this.selected) : { row: 0, item: 0 };
		this.selectedIndex = Math.max(0, at.row);
		const rows = Math.max(1, this.windowRows());
		if (at.item >= 0 && at.item < this.scroll + 1) this.scroll = Math.max(0, at.item - 1);
		if (at.item >= this.scroll + rows) this.scroll = at.item - rows + 1;
		this.scroll = Math.max(0, Math.min(this.scroll, Math.max(0, this.model.length - rows)));
	}

	private windowRows(): number {
		return this.host.bodyRows() - (this.filterInput ? 2 : 0) - (this.search?.hasHits() ? 1 : 0);
	}

	selectedRow(): BoardRow | undefined {
		return this.selected ? this.deps.feed.row(this.selected) : undefined;
	}

	select(id: string): void {
		this.cursorAtTop = false;
		this.pendingSelect = id;
		this.filter = "";
		this.load(this.deps.feed.rows());
	}

	private move(delta: number): void {
		if (this.model.rowCount === 0) return;
		const at = this.selected ? this.model.position(this.selected).row : 0;
		const next = Math.max(0, Math.min(this.model.rowCount - 1, at + delta));
		this.selected = this.model.rowAt(next)?.id;
		this.reveal();
	}

	private setFilter(text: string): void {
		this.filter = text.replace(/\s+/g, " ").trim();
		if (this.filter && !this.search)
			this.search = new BoardSearch(
				this.deps.service.storeDir,
				() => {
					this.load(this.deps.feed.rows());
					this.host.changed();
				},
				this.deps.search,
			);
		this.search?.setFilter(this.filter);
		this.load(this.deps.feed.rows());
	}

	/** What the board's header says about the list (archived shown, filter). */
	headerNotes(): string[] {
		const notes: string[] = [];
		if (this.showArchived) notes.push(`showing ${this.deps.feed.counts().archived} archived`);
		if (this.filter) notes.push(`filter: ${this.filter}`);
		if (this.search?.hasHits()) notes.push(`${this.search.ids().size} found by search`);
		return notes;
	}

	private filterLines(width: number): string[] {
		if (!this.filterInput) return [];
		const keys = this.deps.keys;
		const what = `Filter (text, s:<state>, on:<target>): ${keyLabel(keys, "submit", true)} keeps it, ${keyLabel(keys, "cancel", true)} clears it`;
		return [fit(this.deps.theme.fg("accent", what), width), ...this.filterInput.render(width)];
	}

	override takesText(): boolean {
		return this.filterInput !== undefined;
	}

	override handleInput(data: string): void {
		this.cursorAtTop = false;
		const input = this.filterInput;
		if (!input) {
			const entry = this.entryFor(data);
			this.navigatedAt = entry?.moves ? this.host.now() : undefined;
			const slid = this.slid;
			this.slid = undefined;
			// A key on the row under the cursor right after another row slid there by itself: say so first.
			if (entry?.actsOnRow && slid && this.host.now() - slid.at < SLID_GRACE_MS && slid.id === this.selected) {
				this.host.setStatus(
					`${clean(this.selectedRow()?.name)} just moved under the cursor: press ${keyLabel(this.deps.keys, actionOf(entry), true)} again to act on it`,
				);
				return;
			}
			super.handleInput(data);
			return;
		}
		const keys = this.deps.keys;
		if (keyMatches(keys, data, "cancel")) {
			this.filterInput = undefined;
			this.setFilter("");
		} else if (keyMatches(keys, data, "submit")) {
			this.filterInput = undefined;
			this.reveal();
		} else {
			input.handleInput(data);
			// Live filtering: the list narrows as the user types.
			this.setFilter(input.getValue());
		}
	}

	override hints(): { keys: string; label: string; keep?: boolean }[] {
		if (!this.filterInput) return super.hints();
		return [
			{ keys: keysLabel(this.deps.keys, "submit", true), label: "keep the filter" },
			{ keys: keysLabel(this.deps.keys, "cancel", true), label: "clear it" },
		];
	}

	keyTable(): KeyEntry[] {
		const host = this.host;
		const canGoBack = this.deps.canGoBack === true;
		return [
			{
				keys: ["up", "down"],
				help: "move the selection",
				moves: true,
				run: (data) => this.move(keyMatches(this.deps.keys, data, "up") ? -1 : 1),
			},
			{
				keys: ["pageUp", "pageDown"],
				help: "move the selection a page",
				moves: true,
				run: (data) =>
					this.move((keyMatches(this.deps.keys, data, "pageUp") ? -1 : 1) * Math.max(1, this.windowRows() - 1)),
			},
			{
				keys: "confirm",
				help: "peek: the row in full (question, live text, receipts, answer, events)",
				hint: "peek",
				actsOnRow: true,
				run: () => {
					const row = this.selectedRow();
					if (!row) return;
					host.push(new PeekView(host, row.id));
					void this.deps.service.markViewed(row.id).catch(() => undefined);
				},
			},
			{
				keys: "dispatch",
				help: "new agent: type a prompt, enter starts it (ctrl+o shows the options first)",
				hint: "new",
				run: () => host.push(new DispatchView(host, (rows) => rows[0] && this.select(rows[0].id))),
			},
			...rowActions(host, () => this.selectedRow(), { hints: ["reply", "stop", "open", "archive"] }),
			{
				keys: "filter",
				help: "filter by text, s:<state> and on:<target> (e.g. s:need, s:fail login, on:local); its words also search everything that ran (prompts, text, tool output, answers, changed files), and the rows found join the list",
				hint: "filter",
				run: () => {
					const input = new Input();
					if (this.filter) input.handleInput(`\x1b[200~${this.filter}\x1b[201~`);
					input.focused = this.focused;
					this.filterInput = input;
					this.reveal();
				},
			},
			{
				keys: "showArchived",
				help: "show / hide archived rows",
				run: () => {
					this.showArchived = !this.showArchived;
					this.load(this.deps.feed.rows());
				},
			},
			{
				keys: "settings",
				help: "board settings: strip, notices, OS notifications, how many runs at a time here and on each target, the board in a browser, notifiers",
				run: () =>
					void this.deps.service.targets.list().then(
						(targets) => {
							// Made once: each limit entry holds the value it last set; the rest is read on each refresh.
							const limits = limitEntries(targets);
							host.push(
								new SettingsView(host, () => [
									...SETTINGS,
									...limits,
									WEB_SETTING,
									...policyEntries(
										this.deps.service.storeDir,
										this.deps.models,
										targets.map((t) => t.name),
									),
									...notifyEntries(this.deps.service.storeDir),
								]),
							);
						},
						(error: unknown) => {
							host.push(
								new SettingsView(host, () => [
									...SETTINGS,
									WEB_SETTING,
									...notifyEntries(this.deps.service.storeDir),
								]),
							);
							host.setStatus(`limits unavailable: ${message(error)}`);
						},
					),
			},
			{
				keys: "back",
				help: "back to the session you attached from (also /agent-board back)",
				hint: "back to your session",
				disabled: () => (canGoBack ? undefined : "not attached: nothing to go back to"),
				run: () => host.close({ kind: "back" }),
			},
			{
				keys: "cancel",
				help: "clear the filter; close the board when there is none",
				run: () => (this.filter ? this.setFilter("") : host.close({ kind: "close" })),
			},
			{ keys: "quit", help: "close the board", hint: "quit", run: () => host.close({ kind: "close" }) },
			{ keys: "help", help: "this help", hint: "help", run: () => host.help(this) },
		];
	}
}
