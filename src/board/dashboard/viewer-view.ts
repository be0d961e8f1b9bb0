/**
 * Read-only readers: a row's transcript (assistant text as Markdown, following a live run) and a
 * diff (pi's renderDiff over the numbered form of git's diff), of one worktree row or of two
 * attempts. Content is re-read when the feed reports its rows, at most once a second.
 */
import type { ThemeColor } from "@earendil-works/pi-coding-agent";
import type { BoardRow } from "../engine/types.ts";
import { toNumberedDiff } from "../view-model/diff.ts";
import { clean, cleanBlock } from "../view-model/row-text.ts";
import type { SentKind, TranscriptEntry } from "../view-model/transcript.ts";
import { fit, message } from "../view-model/ui-types.ts";
import { ScrollLines, scrollKeys } from "./scroll-lines.ts";
import { markdownLines, wrap } from "./text.ts";
import { feedRow, type Host, type KeyEntry, Lines, View } from "./view.ts";

const RELOAD_MS = 1000;

export abstract class ReaderView extends View {
	protected readonly scroller: ScrollLines;
	private revision = 0;
	private cache: { key: string; lines: readonly string[] } | undefined;
	private loading: Promise<void> | undefined;
	private trailing: ReturnType<typeof setTimeout> | undefined;
	private lastLoad = 0;

	/** `followEnd`: follows a live run's end; `fill`: takes the board's whole height (the console's zoom). */
	constructor(host: Host, followEnd: boolean, fill = false) {
		super(host);
		this.scroller = new ScrollLines(
			host,
			(width) => [...this.cached(width), ...this.liveLines(width)],
			() => this.contentRows(),
			{ followEnd, fill },
		);
		const theme = host.deps.theme;
		this.addChild(
			new Lines((width) => [
				fit(`${theme.bold(this.title())}${theme.fg("dim", this.scroller.position(width))}`, width),
			]),
		);
		this.addChild(this.scroller);
	}

	abstract title(): string;
	/** Rows whose change makes the content stale. */
	protected abstract watched(): string[];
	protected abstract load(): Promise<void>;
	protected abstract content(width: number): string[];

	/** Rows for the content (the title takes one). */
	protected contentRows(): number {
		return this.host.bodyRows() - 1;
	}

	/** Lines after the content that change faster than it is re-read (a live reply); not cached. */
	protected liveLines(_width: number): string[] {
		return [];
	}

	/** Content is drawn once per revision and width: the 1 s tick must not re-render Markdown. */
	private cached(width: number): readonly string[] {
		const key = `${this.revision}:${width}`;
		if (this.cache?.key !== key) this.cache = { key, lines: this.content(width) };
		return this.cache.lines;
	}

	/** Loads now, or once more after the one in flight, never more than once a second. */
	reload(): Promise<void> {
		if (this.loading) {
			this.trailing ??= setTimeout(() => {
				this.trailing = undefined;
				void this.reload();
			}, RELOAD_MS);
			return this.loading;
		}
		const wait = Math.max(0, this.lastLoad + RELOAD_MS - Date.now());
		this.loading = new Promise<void>((resolve) => setTimeout(resolve, wait))
			.then(() => this.load())
			.then(
				() => {
					this.revision += 1;
					this.host.changed();
				},
				(error: unknown) => this.host.setStatus(`could not read: ${message(error)}`),
			)
			.finally(() => {
				this.loading = undefined;
				this.lastLoad = Date.now();
			});
		return this.loading;
	}

	override onRows(ids: readonly string[]): void {
		if (this.watched().some((id) => ids.includes(id))) void this.reload();
	}

	override dispose(): void {
		if (this.trailing) clearTimeout(this.trailing);
		this.trailing = undefined;
	}

	keyTable(): KeyEntry[] {
		return [
			...scrollKeys(this.deps.keys, this.scroller, {
				line: "scroll a line",
				page: "scroll a page",
				ends: "top / end (the end follows a live run)",
			}),
			{ keys: ["cancel", "quit"], help: "back", hint: "back", keep: true, run: () => this.host.pop(this) },
			{ keys: "help", help: "this help", hint: "help", run: () => this.host.help(this) },
		];
	}
}

const ROLE_STYLE: Record<TranscriptEntry["role"], { label: string; color: ThemeColor }> = {
	user: { label: "you", color: "accent" },
	assistant: { label: "agent", color: "success" },
	tool: { label: "tool", color: "muted" },
	error: { label: "error", color: "error" },
	info: { label: "info", color: "dim" },
};

/** How a message the user sent went in, as its transcript line says it; and while it waits to land. */
const SENT_TEXT: Record<SentKind, string> = {
	steer: "steer",
	followUp: "follow-up",
	answer: "answer",
	reply: "reply: new run",
};
const WAITING_TEXT: Record<SentKind, string> = {
	steer: "lands after the current step",
	followUp: "lands after this turn",
	answer: "sent",
	reply: "sent",
};

function sentMark(entry: TranscriptEntry): string {
	// The supervisor's answer names who decided it: a rule (its file:line) or its model.
	if (entry.by) return `(answer by ${entry.by}) `;
	if (!entry.sent) return "";
	return `(${SENT_TEXT[entry.sent]}${entry.waiting ? `, ${WAITING_TEXT[entry.sent]}` : ""}) `;
}

/** Transcript entries as lines: a role column, then the text (assistant text as Markdown; a user's later messages say how they went in). */
export function transcriptLines(host: Host, entries: readonly TranscriptEntry[], width: number): string[] {
	const theme = host.deps.theme;
	const out: string[] = [];
	for (const entry of entries) {
		const style = entry.by
			? { label: entry.by.startsWith("rule") ? "rule" : "model", color: "warning" as ThemeColor }
			: ROLE_STYLE[entry.role];
		const mark = sentMark(entry);
		const body =
			entry.role === "assistant"
				? markdownLines(entry.text, width - 7, theme)
				: wrap(`${mark ? theme.fg("accent", mark) : ""}${entry.text}`, width - 7);
		body.forEach((line, i) => {
			out.push(fit(`${i === 0 ? theme.fg(style.color, style.label.padEnd(6)) : "      "} ${line}`, width));
		});
	}
	return out;
}

export class TranscriptView extends ReaderView {
	private entries: TranscriptEntry[] = [];
	private readonly rowId: string;

	constructor(host: Host, rowId: string) {
		super(host, true);
		this.rowId = rowId;
		void this.reload();
	}

	title(): string {
		return `Transcript: ${clean(feedRow(this.host, this.rowId)?.name) || "(gone)"}`;
	}

	protected watched(): string[] {
		return [this.rowId];
	}

	protected async load(): Promise<void> {
		const row = feedRow(this.host, this.rowId);
		if (row) this.entries = await this.deps.readTranscript(row);
	}

	protected content(width: number): string[] {
		return transcriptLines(this.host, this.entries, width);
	}
}

/** One worktree row against its branch point, or two attempts' current files. */
export type DiffSource = { row: string } | { a: BoardRow; b: BoardRow };

function attemptLabel(row: BoardRow): string {
	return row.attempt ? `#${row.attempt.index} ${row.id}` : row.id;
}

export class DiffView extends ReaderView {
	private lines: string[] = ["(loading…)"];
	private readonly source: DiffSource;

	constructor(host: Host, source: DiffSource) {
		super(host, false);
		this.source = source;
		void this.reload();
	}

	title(): string {
		const source = this.source;
		if ("a" in source) return `Diff: ${attemptLabel(source.a)} vs ${attemptLabel(source.b)}`;
		return `Diff: ${clean(feedRow(this.host, source.row)?.name) || "(gone)"}`;
	}

	protected watched(): string[] {
		const source = this.source;
		return "a" in source ? [source.a.id, source.b.id] : [source.row];
	}

	protected async load(): Promise<void> {
		const source = this.source;
		if ("a" in source) {
			this.lines = await this.deps.service.compareDiff(source.a.id, source.b.id);
			return;
		}
		const row = feedRow(this.host, source.row);
		if (row) this.lines = await this.deps.readDiff(row);
	}

	protected content(width: number): string[] {
		const numbered = toNumberedDiff(this.lines.map((line) => cleanBlock(line).replace(/\n/g, " ")));
		const render = this.deps.renderDiff;
		if (render)
			return render(numbered.join("\n"))
				.split("\n")
				.map((line) => fit(line, width));
		const theme = this.deps.theme;
		return numbered.map((line) => {
			const color: ThemeColor = line.startsWith("+")
				? "toolDiffAdded"
				: line.startsWith("-")
					? "toolDiffRemoved"
					: "toolDiffContext";
			return fit(theme.fg(color, line), width);
		});
	}
}
