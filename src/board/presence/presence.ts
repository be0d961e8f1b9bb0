/**
 * The board's presence outside the dashboard, fed by the one shared BoardFeed: the footer status
 * ("board: 2 need input, 1 running"), the below-editor strip and notifications (pi notices plus
 * OS-level ones through terminal escapes). Counts come from the feed, kept up to date row by row, so
 * the footer, the strip and the board header never disagree and never count the whole store.
 */
import type { TUI } from "@earendil-works/pi-tui";
import type { BoardRow, RowState } from "../engine/types.ts";
import type { BoardFeed } from "../view-model/feed.ts";
import { clean, countRows, fullSummary, type RowCounts } from "../view-model/row-text.ts";
import type { UiTheme } from "../view-model/ui-types.ts";
import { type BoardSettings, osNotify } from "./notify.ts";
import { BoardStrip } from "./strip.ts";

export const STATUS_KEY = "agent-board";
export const STRIP_KEY = "agent-board-strip";
const NOTIFY_STATES: readonly RowState[] = ["needs_input", "failed", "completed"];

export interface WatcherUi {
	setStatus(key: string, text: string | undefined): void;
	notify(message: string, type?: "info" | "warning" | "error"): void;
	setWidget?(
		key: string,
		content: ((tui: TUI, theme: UiTheme) => BoardStrip) | undefined,
		options?: { placement?: "aboveEditor" | "belowEditor" },
	): void;
	/** pi's theme: a question's notice is drawn bold in the accent colour (pi draws info notices dim). */
	theme?: UiTheme;
}

export interface Transition {
	row: BoardRow;
	from: RowState | undefined;
}

/** Rows that entered a notify state since `previous`; rows first seen in a notify state are not news. */
export function transitions(previous: ReadonlyMap<string, RowState>, rows: readonly BoardRow[]): Transition[] {
	const out: Transition[] = [];
	for (const row of rows) {
		if (row.archived) continue;
		const from = previous.get(row.id);
		if (from === row.state || !NOTIFY_STATES.includes(row.state)) continue;
		if (from === undefined) continue;
		out.push({ row, from });
	}
	return out;
}

export function countsText(counts: RowCounts): string | undefined {
	const parts: string[] = [];
	if (counts.waiting > 0) parts.push(`${counts.waiting} need input`);
	if (counts.running > 0) parts.push(`${counts.running} running`);
	return parts.length > 0 ? `board: ${parts.join(", ")}` : undefined;
}

export function statusText(rows: readonly BoardRow[]): string | undefined {
	return countsText(countRows(rows));
}

/** A question is not a problem: it is shown as info, not as a warning. */
export function notificationText(t: Transition): { title: string; text: string; type: "info" | "warning" | "error" } {
	const name = clean(t.row.name);
	if (t.row.state === "needs_input")
		return {
			title: `${name} needs input`,
			text: `agent-board: ${name} asks: ${clean(t.row.question ?? t.row.summary)}`,
			type: "info",
		};
	if (t.row.state === "failed")
		return {
			title: `${name} failed`,
			text: `agent-board: ${name} failed: ${clean(t.row.error ?? t.row.summary)}`,
			type: "error",
		};
	return { title: `${name} completed`, text: `agent-board: ${name} completed: ${fullSummary(t.row)}`, type: "info" };
}

export class BoardPresence {
	private states = new Map<string, RowState>();
	private seeded = false;
	private unsubscribe: (() => void) | undefined;
	private ui: WatcherUi | undefined;
	private lastStatus: string | undefined = "";
	private boardOpen = false;

	readonly feed: BoardFeed;
	settings: BoardSettings;
	private readonly writeTerminal: (text: string) => void;

	constructor(feed: BoardFeed, settings: BoardSettings, writeTerminal: (text: string) => void) {
		this.feed = feed;
		this.settings = settings;
		this.writeTerminal = writeTerminal;
	}

	/** While the board is open it shows changes itself: pi notices would only repeat them, and the strip hides. */
	get quiet(): boolean {
		return this.boardOpen;
	}

	set quiet(open: boolean) {
		this.boardOpen = open;
	}

	start(ui: WatcherUi): void {
		this.stop();
		this.ui = ui;
		this.unsubscribe = this.feed.subscribe((ids) => this.onChange(ids));
		this.applySettings(this.settings);
		void this.feed.start();
		if (this.feed.started) this.onChange([]);
	}

	stop(): void {
		this.unsubscribe?.();
		this.unsubscribe = undefined;
		this.ui?.setWidget?.(STRIP_KEY, undefined);
		this.ui = undefined;
		this.lastStatus = "";
	}

	applySettings(settings: BoardSettings): void {
		this.settings = settings;
		const ui = this.ui;
		if (!ui?.setWidget) return;
		if (settings.strip)
			ui.setWidget(
				STRIP_KEY,
				(tui, theme) =>
					new BoardStrip(
						this.feed,
						theme,
						() => tui.requestRender(),
						() => this.boardOpen,
					),
				{ placement: "belowEditor" },
			);
		else ui.setWidget(STRIP_KEY, undefined);
	}

	private onChange(ids: readonly string[]): void {
		const ui = this.ui;
		if (!ui) return;
		const counts = this.feed.counts();
		const status = countsText(counts);
		if (status !== this.lastStatus) ui.setStatus(STATUS_KEY, status);
		this.lastStatus = status;
		// Only the reported rows can have changed state; a full relist reports them all.
		const changed: BoardRow[] = [];
		for (const id of ids) {
			const row = this.feed.row(id);
			if (row) changed.push(row);
		}
		if (this.seeded) {
			for (const t of transitions(this.states, changed)) {
				const note = notificationText(t);
				// pi draws info notices dim; bold (which ends faint) in the accent colour makes a question stand out.
				const text =
					t.row.state === "needs_input" && ui.theme ? ui.theme.bold(ui.theme.fg("accent", note.text)) : note.text;
				if (!this.boardOpen && this.settings.notices) ui.notify(text, note.type);
				if (this.settings.osNotify) osNotify(this.writeTerminal, "pi agent board", note.title);
			}
		}
		if (!this.seeded) this.states = new Map(this.feed.rows().map((row) => [row.id, row.state]));
		else for (const row of changed) this.states.set(row.id, row.state);
		this.seeded = counts.rows + counts.archived > 0 || this.feed.revision > 0;
	}
}
