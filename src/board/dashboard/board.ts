/**
 * The /agent-board component: a stack of views (list at the bottom; peek, transcript, compare,
 * dialogs pushed over it) under one header, with the status and key-hint lines always at the
 * bottom. The board takes the terminal's rows minus what pi keeps (a transcript row and its footer),
 * so nothing of it is cut. Rows come from the shared feed; a 1 s tick repaints ages without reading
 * the store.
 */
import type { Component, Focusable } from "@earendil-works/pi-tui";
import { visibleWidth } from "@earendil-works/pi-tui";
import { clean } from "../view-model/row-text.ts";
import { fit, message } from "../view-model/ui-types.ts";
import type { BoardDeps, BoardResult } from "./deps.ts";
import { HelpView } from "./help-view.ts";
import { hintLine } from "./keys.ts";
import { ListView } from "./list-view.ts";
import { wrap } from "./text.ts";
import type { Host, View } from "./view.ts";

/** Rows pi keeps while the board is open: one transcript row and its footer (path, stats, statuses). */
export const PI_ROWS = 4;
/** The board's own lines around the top view: header, status, hint. */
const FRAME_ROWS = 3;
/** A long status (an engine's refusal) wraps to this many lines rather than being cut. */
const STATUS_ROWS = 3;

/**
 * Keys as the board should see them. pi reads Escape and a key that reaches it within its escape
 * timeout, or in the same read while it was busy drawing, as one alt+key ("\x1b/"). Where no text
 * field has the keys and the view binds no such alt key, that is what a person typed: Escape, then
 * the key. (A text field keeps alt+letter: it moves by words there.)
 */
export function splitEscape(data: string, top: View): string[] {
	if (data.length !== 2 || data[0] !== "\x1b") return [data];
	if (top.takesText() || top.entryFor(data)) return [data];
	return ["\x1b", data.slice(1)];
}

export class Board implements Component, Focusable, Host {
	readonly deps: BoardDeps;
	readonly list: ListView;
	/** Page keys move the board's lists, not pi's fullscreen transcript behind it. */
	readonly capturesViewportInput = true;
	status = "";
	/** Lines the status took in the last frame, and the overlay question's lines: the body gives them up. */
	private statusRows = 1;
	private overlayRows = 0;
	private readonly stack: View[] = [];
	private isFocused = false;
	private lastWidth = 80;
	private cache: { width: number; lines: string[] } | undefined;
	private timer: ReturnType<typeof setInterval> | undefined;
	private unsubscribe: (() => void) | undefined;
	private unsubscribeDiff: (() => void) | undefined;

	constructor(deps: BoardDeps) {
		this.deps = deps;
		this.list = new ListView(this);
		this.stack.push(this.list);
	}

	/** Follows the shared feed; the tick repaints ages without reading the store. */
	async start(): Promise<void> {
		const { feed, diffCache, overlaps } = this.deps;
		this.unsubscribe = feed.subscribe((ids, relisted) => this.onRows(ids, relisted));
		this.unsubscribeDiff = diffCache?.subscribe(() => this.changed());
		const unsubscribeOverlaps = overlaps?.subscribe(() => this.changed());
		const unsubscribe = this.unsubscribe;
		this.unsubscribe = () => {
			unsubscribe();
			unsubscribeOverlaps?.();
		};
		// The first screen: live rows and the newest ones; the rest arrive in idle slices as changes.
		const fill = feed.fill();
		await fill.first;
		this.list.load(feed.rows());
		void fill.done.then(() => this.list.firstFillDone());
		if (feed.lastError) this.status = `refresh failed: ${feed.lastError}`;
		this.changed();
		this.timer = setInterval(() => this.changed(), this.deps.tickMs ?? 1000);
	}

	dispose(): void {
		this.unsubscribe?.();
		this.unsubscribe = undefined;
		this.unsubscribeDiff?.();
		this.unsubscribeDiff = undefined;
		for (const view of this.stack) view.dispose();
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
	}

	private onRows(ids: readonly string[], relisted: boolean): void {
		if (this.deps.feed.lastError) this.status = `refresh failed: ${this.deps.feed.lastError}`;
		for (const view of this.stack) view.onRows(ids, relisted);
		this.changed();
	}

	top(): View {
		return this.stack[this.stack.length - 1] ?? this.list;
	}

	// Host

	push(view: View): void {
		this.top().focused = false;
		this.stack.push(view);
		view.focused = this.isFocused;
		this.changed();
	}

	pop(view: View): void {
		const at = this.stack.indexOf(view);
		if (at <= 0) return;
		for (const gone of this.stack.splice(at)) {
			gone.focused = false;
			gone.dispose();
		}
		this.top().focused = this.isFocused;
		this.changed();
	}

	reveal(view: View): void {
		const at = this.stack.indexOf(view);
		if (at >= 0 && at < this.stack.length - 1) this.pop(this.stack[at + 1] as View);
	}

	close(result: BoardResult): void {
		this.deps.done(result);
	}

	setStatus(text: string): void {
		this.status = text;
		this.changed();
	}

	/** What the terminal leaves for the board. */
	rows(): number {
		return Math.max(FRAME_ROWS + 5, this.deps.height() - PI_ROWS);
	}

	bodyRows(): number {
		return Math.max(1, this.rows() - FRAME_ROWS - (this.statusRows - 1) - this.overlayRows);
	}

	width(): number {
		return this.lastWidth;
	}

	changed(): void {
		this.cache = undefined;
		this.deps.requestRender();
	}

	now(): number {
		return this.deps.now ? this.deps.now() : Date.now();
	}

	help(view: View): void {
		this.push(new HelpView(this, view));
	}

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

	// Component

	get focused(): boolean {
		return this.isFocused;
	}

	set focused(value: boolean) {
		this.isFocused = value;
		this.top().focused = value;
	}

	render(width: number): string[] {
		if (this.cache?.width === width && !this.top().uncached) return this.cache.lines;
		this.lastWidth = width;
		const theme = this.deps.theme;
		const top = this.top();
		const status = this.statusLines(width);
		this.statusRows = status.length;
		const body = this.body(top, width);
		const hints = hintLine(top.hints(), width);
		const lines = [this.header(width), ...body, ...status, fit(theme.fg("dim", hints), width)];
		// Safety net: only lines that are too wide pay for a styled truncation.
		const fitted = lines.map((line) => (visibleWidth(line) > width ? fit(line, width) : line));
		this.cache = { width, lines: fitted };
		return fitted;
	}

	/** The top view; an overlay under the view beneath it, which keeps the rows the question leaves. */
	private body(top: View, width: number): string[] {
		const below = this.stack[this.stack.length - 2];
		if (!top.overlay || !below) {
			this.overlayRows = 0;
			return top.render(width).slice(0, this.bodyRows());
		}
		const question = top.render(width).slice(0, Math.max(1, this.rows() - FRAME_ROWS - 1));
		this.overlayRows = question.length;
		return [...below.render(width).slice(0, this.bodyRows()), ...question];
	}

	/** The status wrapped, never cut mid-word; past STATUS_ROWS lines its end is cut with "…". */
	private statusLines(width: number): string[] {
		if (!this.status) return [""];
		const lines = wrap(this.status, width);
		const shown =
			lines.length > STATUS_ROWS
				? [
						...lines.slice(0, STATUS_ROWS - 1),
						fit(`${lines[STATUS_ROWS - 1] ?? ""} ${lines.slice(STATUS_ROWS).join(" ")}`, width),
					]
				: lines;
		return shown.map((line) => fit(this.deps.theme.fg("muted", line), width));
	}

	private header(width: number): string {
		const theme = this.deps.theme;
		const counts = this.deps.feed.counts();
		const loading = this.deps.feed.loading;
		const rows = loading
			? `loading ${loading.done.toLocaleString("en-US")}/${loading.total.toLocaleString("en-US")} rows`
			: `${counts.rows} rows`;
		const parts = [rows, `${counts.running} running`, `${counts.waiting} need input`, ...this.list.headerNotes()];
		const attached = this.deps.attachedId;
		if (attached) parts.push(`attached: ${clean(this.deps.feed.row(attached)?.name) || attached}`);
		return fit(`${theme.fg("accent", theme.bold("Agent board"))} ${theme.fg("muted", parts.join(" · "))}`, width);
	}

	invalidate(): void {
		this.cache = undefined;
		for (const view of this.stack) view.invalidate();
	}

	handleInput(data: string): void {
		for (const key of splitEscape(data, this.top())) {
			const top = this.top();
			if (top.retiresStatus) this.status = "";
			top.handleInput(key);
		}
		this.changed();
	}
}
