/**
 * A live console on a running row, zoomed to the board's whole height: its transcript fills it and
 * follows the stream (a long reply joined from the tails the status carries, so it reads whole), the
 * messages the user sent marked where they landed (or waiting to), the question and its choices when
 * it asks, and pi's Editor at the bottom: enter steers (or answers), the follow-up key queues after
 * the current turn. Leaving it leaves the agent running.
 */
import { Editor, type Focusable } from "@earendil-works/pi-tui";
import { LIVE_TEXT_CHARS } from "../../../runner/life/state-rules.mjs";
import type { BoardRow } from "../engine/types.ts";
import { clean, cleanBlock, liveActivity, liveTail, STATE_LABEL } from "../view-model/row-text.ts";
import { followStream } from "../view-model/stream-follow.ts";
import type { TranscriptEntry } from "../view-model/transcript.ts";
import { fit } from "../view-model/ui-types.ts";
import { Choices, questionLines, sendReply } from "./reply-view.ts";
import { scrollKeys } from "./scroll-lines.ts";
import { wrap } from "./text.ts";
import { editorTheme } from "./theme.ts";
import { feedRow, type Host, type KeyEntry, Lines } from "./view.ts";
import { ReaderView, transcriptLines } from "./viewer-view.ts";

export class ConsoleView extends ReaderView {
	readonly editor: Editor;
	private readonly rowId: string;
	private entries: TranscriptEntry[] = [];
	private sending = false;
	private readonly choices = new Choices();
	/** The reply streaming now, as much of it as the console has seen (followStream), and whether from its start. */
	private streamed = "";
	private streamedFromStart = false;

	constructor(host: Host, rowId: string) {
		super(host, true, true);
		this.rowId = rowId;
		const live = feedRow(host, rowId)?.live?.text;
		if (live) this.follow(live);
		this.editor = new Editor(host.deps.tui, editorTheme(host.deps.theme), { paddingX: 1 });
		this.editor.onSubmit = (text) => this.send(text, false);
		this.addChild(new Lines((width) => this.bottomLines(width)));
		this.addChild(this.editor);
		void this.reload();
	}

	protected override contentRows(): number {
		const width = this.host.width();
		return this.host.bodyRows() - 1 - this.bottomLines(width).length - this.editor.render(width).length;
	}

	private row(): BoardRow | undefined {
		return feedRow(this.host, this.rowId);
	}

	title(): string {
		const row = this.row();
		if (!row) return "Console: (the row is gone)";
		return `Console: ${clean(row.name)} · ${STATE_LABEL[row.state].toLowerCase()}${row.alive ? "" : " (not running)"}`;
	}

	protected watched(): string[] {
		return [this.rowId];
	}

	protected async load(): Promise<void> {
		const row = this.row();
		if (row) this.entries = await this.deps.readTranscript(row);
		// The streamed reply ended and the transcript just read holds it (or the run is over): drop the copy.
		const now = this.row();
		if (!now?.live?.text && (!now?.alive || this.landed())) this.streamed = "";
	}

	/** The transcript's last agent text ends as the streamed copy does. */
	private landed(): boolean {
		const fold = (text: string) => text.replace(/\s+/g, " ").trim();
		const end = fold(cleanBlock(this.streamed)).slice(-40);
		const last = [...this.entries].reverse().find((entry) => entry.role === "assistant");
		return end === "" || (last !== undefined && fold(last.text).endsWith(end));
	}

	override onRows(ids: readonly string[]): void {
		const text = ids.includes(this.rowId) ? this.row()?.live?.text : undefined;
		// Kept until the transcript holds the ended reply, so it never blinks out in between.
		if (text) this.follow(text);
		super.onRows(ids);
	}

	private follow(text: string): void {
		const next = followStream(this.streamed, text);
		// A fresh start at the status's cap began mid-message: its first word is cut.
		if (next === text) this.streamedFromStart = text.length < LIVE_TEXT_CHARS;
		this.streamed = next;
	}

	protected content(width: number): string[] {
		return transcriptLines(this.host, this.entries, width);
	}

	/** What streams now: not in the session file until its message ends. */
	protected override liveLines(width: number): string[] {
		const row = this.row();
		const theme = this.deps.theme;
		const out: string[] = [];
		const text = this.streamedFromStart ? cleanBlock(this.streamed) : liveTail(this.streamed);
		if (text)
			wrap(text, width - 7).forEach((line, i) => {
				out.push(fit(`${i === 0 ? theme.fg("success", "agent ") : "      "} ${line}`, width));
			});
		const activity = row ? liveActivity(row, this.host.now()) : "";
		if (activity) out.push(fit(`${theme.fg("accent", "now   ")} ${activity}`, width));
		return out;
	}

	private bottomLines(width: number): string[] {
		const row = this.row();
		const theme = this.deps.theme;
		const question = questionLines(this.host, row, width).map((line) => fit(line, width));
		const label =
			row?.state === "needs_input"
				? "Answer"
				: row?.alive
					? `Steer (enter), follow-up after this turn (${this.followUpKey()})`
					: "Reply (starts a new run)";
		return [...question, fit(theme.fg("accent", label), width)];
	}

	private followUpKey(): string {
		const keys = this.deps.keys.getKeys?.("app.message.followUp") ?? [];
		return keys.length > 0 ? keys.join("/") : "alt+enter";
	}

	protected override focusTarget(): Focusable {
		return this.editor;
	}

	override keyTable(): KeyEntry[] {
		const pass = (data: string) => this.editor.handleInput(data);
		return [
			{
				keys: "submit",
				help: "send: steers the running agent, answers its question (a finished row: starts a new run)",
				hint: "send",
				run: pass,
			},
			{
				keys: "sendFollowUp",
				help: "send as a follow-up after the agent's current turn",
				hint: "follow-up",
				run: () => this.send(this.editor.getExpandedText(), true),
			},
			{ keys: "newLine", help: "new line", run: pass },
			this.choices.entry(() => this.row(), this.editor),
			...scrollKeys(this.deps.keys, this.scroller, { page: "scroll the transcript (the end follows the stream)" }),
			{
				keys: "cancel",
				help: "leave the console; the agent keeps running",
				hint: "leave",
				keep: true,
				run: (data) => (this.editor.capturesViewportInput ? pass(data) : this.host.pop(this)),
			},
			{ keys: "help", help: "this help", hint: "help", run: () => this.host.help(this) },
		];
	}

	override handleInput(data: string): void {
		if (this.sending) return;
		super.handleInput(data);
	}

	protected override otherInput(data: string): void {
		this.editor.handleInput(data);
	}

	private send(text: string, followUp: boolean): void {
		if (!text.trim()) {
			this.host.setStatus("type a message first");
			return;
		}
		this.sending = true;
		this.editor.setText("");
		sendReply(
			this.host,
			this.rowId,
			text,
			followUp,
			() => {
				this.sending = false;
				this.choices.reset();
			},
			(back) => {
				this.sending = false;
				this.editor.setText(back);
			},
		);
		if (!this.row()) this.sending = false;
	}
}
