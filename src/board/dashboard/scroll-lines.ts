/**
 * A bounded, scrollable window of lines that can follow the end of growing content (a live
 * transcript). Our own: pi-tui's ScrollView clips only under pi's fullscreen layout engine, and the
 * board is drawn as plain lines in pi's editor slot. Drawing never moves the window; keys do.
 */
import type { Component } from "@earendil-works/pi-tui";
import type { KeyMatcher } from "../view-model/ui-types.ts";
import { keyMatches } from "./keys.ts";
import type { Host, KeyEntry } from "./view.ts";

interface Window {
	lines: readonly string[];
	start: number;
	room: number;
	max: number;
}

export class ScrollLines implements Component {
	private offset = 0;
	private following: boolean;
	private readonly host: Host;
	private readonly content: (width: number) => readonly string[];
	private readonly rows: () => number;
	private readonly followEnd: boolean;
	private readonly fill: boolean;

	/** `followEnd`: the window stays on the end as content grows; `fill`: short content is padded to the window's rows. */
	constructor(
		host: Host,
		content: (width: number) => readonly string[],
		rows: () => number,
		options: { followEnd?: boolean; fill?: boolean } = {},
	) {
		this.host = host;
		this.content = content;
		this.rows = rows;
		this.followEnd = options.followEnd === true;
		this.fill = options.fill === true;
		this.following = this.followEnd;
	}

	private window(width: number): Window {
		const lines = this.content(width);
		const room = Math.max(1, this.rows());
		const max = Math.max(0, lines.length - room);
		return { lines, room, max, start: this.following ? max : Math.min(this.offset, max) };
	}

	render(width: number): string[] {
		const { lines, start, room } = this.window(width);
		const shown = lines.slice(start, start + room);
		return this.fill && shown.length < room ? [...shown, ...Array<string>(room - shown.length).fill("")] : shown;
	}

	/** " 12-30/80" when the content does not fit, else "". */
	position(width: number): string {
		const { lines, start, room } = this.window(width);
		return lines.length > room ? ` ${start + 1}-${Math.min(lines.length, start + room)}/${lines.length}` : "";
	}

	/** Scrolling up stops following the end; reaching the end again resumes it. */
	scrollBy(delta: number): void {
		const { start, max } = this.window(this.host.width());
		this.offset = Math.max(0, Math.min(max, start + delta));
		this.following = this.followEnd && this.offset >= max;
	}

	page(): number {
		return Math.max(1, this.rows() - 1);
	}

	top(): void {
		this.offset = 0;
		this.following = false;
	}

	end(): void {
		this.offset = Number.MAX_SAFE_INTEGER;
		this.following = this.followEnd;
	}

	invalidate(): void {}
}

/** Help lines of the scroll keys a view offers; a key whose help is absent is not offered. */
export interface ScrollHelp {
	line?: string;
	page?: string;
	ends?: string;
}

/** The keys that scroll `s` (lines, pages, top/end), each with its help and, when `hints`, its hint. */
export function scrollKeys(keys: KeyMatcher, s: ScrollLines, help: ScrollHelp, hints = true): KeyEntry[] {
	const out: KeyEntry[] = [];
	if (help.line)
		out.push({
			keys: ["up", "down"],
			help: help.line,
			hint: hints ? "scroll" : undefined,
			run: (data) => s.scrollBy(keyMatches(keys, data, "up") ? -1 : 1),
		});
	if (help.page)
		out.push({
			keys: ["pageUp", "pageDown"],
			help: help.page,
			hint: hints ? "page" : undefined,
			run: (data) => s.scrollBy(keyMatches(keys, data, "pageUp") ? -s.page() : s.page()),
		});
	if (help.ends)
		out.push({
			keys: ["top", "end"],
			help: help.ends,
			hint: hints ? "top/end" : undefined,
			run: (data) => (keyMatches(keys, data, "top") ? s.top() : s.end()),
		});
	return out;
}
