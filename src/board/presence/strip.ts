/**
 * The compact strip below pi's editor: live rows at a glance while the board is closed (it hides
 * while the board is open, which shows them itself), needs-input first, at most a few lines. It
 * reads the shared feed's live rows (no store reads of its own) and ticks once a second only while
 * something is live, so elapsed times move.
 */
import type { BoardRow } from "../engine/types.ts";
import type { BoardFeed } from "../view-model/feed.ts";
import { clean, fitSummary, formatAge, STATE_GLYPH, summaryParts } from "../view-model/row-text.ts";
import { fit, type UiTheme } from "../view-model/ui-types.ts";
import { visibleWidth } from "@earendil-works/pi-tui";

const MAX_LINES = 3;

/** Live rows for the strip: waiting on the user first, then working, then queued; newest first within. */
export function stripRows(rows: Iterable<BoardRow>): BoardRow[] {
	const rank = (row: BoardRow) =>
		row.state === "needs_input" ? 0 : row.state === "working" || row.alive ? 1 : row.state === "queued" ? 2 : 3;
	return [...rows]
		.filter((row) => !row.archived && rank(row) < 3)
		.sort((a, b) => rank(a) - rank(b) || b.lastActivityAt - a.lastActivityAt);
}

export function stripLines(rows: Iterable<BoardRow>, width: number, now: number, theme: UiTheme): string[] {
	const live = stripRows(rows);
	if (live.length === 0) return [];
	const shown = live.slice(0, live.length > MAX_LINES ? MAX_LINES - 1 : MAX_LINES);
	const lines = shown.map((row) => {
		const color = row.state === "needs_input" ? "accent" : row.state === "queued" ? "muted" : "success";
		const since = row.live?.tool?.startedAt ?? row.live?.waitingSince ?? row.lastActivityAt;
		const head = `${STATE_GLYPH[row.state]} ${clean(row.name)} ${formatAge(now - since)} `;
		const styled = `${theme.fg(color, `${STATE_GLYPH[row.state]} ${clean(row.name)}`)} ${theme.fg("dim", formatAge(now - since))} `;
		return fit(
			`${styled}${theme.fg("muted", fitSummary(summaryParts(row, now), Math.max(1, width - visibleWidth(head))))}`,
			width,
		);
	});
	if (live.length > shown.length)
		lines.push(fit(theme.fg("dim", `+${live.length - shown.length} more live rows · /agent-board`), width));
	return lines;
}

export class BoardStrip {
	private timer: ReturnType<typeof setInterval> | undefined;
	private readonly unsubscribe: () => void;
	private readonly feed: BoardFeed;
	private readonly theme: UiTheme;
	private readonly requestRender: () => void;
	private readonly hidden: () => boolean;
	private readonly now: () => number;

	constructor(
		feed: BoardFeed,
		theme: UiTheme,
		requestRender: () => void,
		hidden: () => boolean = () => false,
		now: () => number = Date.now,
	) {
		this.feed = feed;
		this.theme = theme;
		this.requestRender = requestRender;
		this.hidden = hidden;
		this.now = now;
		this.unsubscribe = feed.subscribe(() => {
			this.syncTimer();
			if (!this.hidden()) this.requestRender();
		});
		this.syncTimer();
	}

	private liveRows(): BoardRow[] {
		const rows: BoardRow[] = [];
		for (const id of this.feed.liveIds()) {
			const row = this.feed.row(id);
			if (row) rows.push(row);
		}
		return rows;
	}

	/** Tick only while a row is live and the strip shows: an idle or hidden strip costs nothing. */
	private syncTimer(): void {
		const live = this.feed.liveIds().size > 0;
		if (live && !this.timer) {
			this.timer = setInterval(() => {
				if (!this.hidden()) this.requestRender();
			}, 1000);
			this.timer.unref?.();
		} else if (!live && this.timer) {
			clearInterval(this.timer);
			this.timer = undefined;
		}
	}

	render(width: number): string[] {
		if (this.hidden()) return [];
		return stripLines(this.liveRows(), width, this.now(), this.theme);
	}

	invalidate(): void {}

	dispose(): void {
		this.unsubscribe();
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
	}
}
