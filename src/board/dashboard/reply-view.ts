/**
 * Reply to a row on pi-tui's Editor (multi-line, bracketed paste, pi's submit/newline keys): it steers
 * a working row, answers a question (shown whole above the editor, with its choices) or resumes a
 * finished row. A reply the service refuses stays in the editor with the reason.
 */
import { Editor, type Focusable } from "@earendil-works/pi-tui";
import type { BoardRow, ReplyResult } from "../engine/types.ts";
import { clean, cleanBlock } from "../view-model/row-text.ts";
import { message } from "../view-model/ui-types.ts";
import { ScrollLines, scrollKeys } from "./scroll-lines.ts";
import { wrap } from "./text.ts";
import { editorTheme } from "./theme.ts";
import { feedRow, type Host, type KeyEntry, Lines, View } from "./view.ts";

export function replyStatus(name: string, result: ReplyResult): string {
	const receipt = result.receipt;
	if (receipt?.status === "rejected") return `${name}: rejected: ${clean(receipt.reason ?? "no reason given")}`;
	switch (result.delivery) {
		case "steer":
			return `steered ${name}: delivered`;
		case "followUp":
			return `${name}: follow-up queued after the current turn`;
		case "answer":
			return `answered ${name}: the agent continues`;
		case "new-run":
			return `${name}: new run on the same session`;
		case "queued":
			return `${name}: queued until its run starts`;
		case "budget":
			return `${name}: budget raised, the agent goes on`;
		case "stopped":
			return `stopped ${name}`;
		default:
			return `${name}: sent, waiting for the worker's receipt`;
	}
}

/** The question of a waiting row with its numbered choices, whole, for the width. */
export function questionLines(host: Host, row: BoardRow | undefined, width: number): string[] {
	if (row?.state !== "needs_input" || !row.question) return [];
	const theme = host.deps.theme;
	const because = row.supervisorNote
		? wrap(clean(row.supervisorNote), width - 2).map((line) => `  ${theme.fg("warning", line)}`)
		: [];
	const out = [
		...because,
		theme.fg("accent", theme.bold("Question:")),
		...wrap(cleanBlock(row.question), width - 2).map((line) => `  ${line}`),
	];
	(row.questionOptions ?? []).forEach((option, i) => {
		out.push(...wrap(`${theme.fg("accent", `${i + 1}.`)} ${clean(option)}`, width - 2).map((line) => `  ${line}`));
	});
	return out;
}

/**
 * Sends `text` to the row and reports what happened on the status line; `done` runs once it is
 * delivered, `failed` gets the text back when it was not.
 */
export function sendReply(
	host: Host,
	rowId: string,
	text: string,
	followUp: boolean,
	done: () => void,
	failed: (text: string) => void,
): void {
	const row = feedRow(host, rowId);
	if (!row) {
		host.setStatus("that row is gone");
		return;
	}
	if (!text.trim()) {
		host.setStatus("empty reply not sent");
		return;
	}
	host.setStatus(`sending to ${row.name}…`);
	host.deps.service.reply(rowId, text, followUp ? { followUp: true } : undefined).then(
		(result) => {
			host.deps.feed.put(result.row);
			done();
			host.setStatus(replyStatus(row.name, result));
		},
		(error: unknown) => {
			failed(text);
			host.setStatus(`not sent: ${message(error)}`);
		},
	);
}

/** Tab in an answer box: the question's choices in turn into the editor, or why there are none. */
export class Choices {
	private index = -1;

	entry(row: () => BoardRow | undefined, editor: Editor): KeyEntry {
		const options = () => {
			const current = row();
			return current?.state === "needs_input" ? (current.questionOptions ?? []) : [];
		};
		return {
			keys: "tab",
			help: "put the next of the question's choices in the editor",
			hint: "choice",
			disabled: () => (options().length > 0 ? undefined : "no choices offered: type your answer"),
			run: () => {
				const list = options();
				this.index = (this.index + 1) % list.length;
				editor.setText(clean(list[this.index]));
			},
		};
	}

	reset(): void {
		this.index = -1;
	}
}

export class ReplyView extends View {
	readonly editor: Editor;
	private readonly rowId: string;
	private readonly followUp: boolean;
	private readonly question: ScrollLines;
	private sending = false;
	private readonly choices = new Choices();

	constructor(host: Host, rowId: string, options: { followUp?: boolean; text?: string } = {}) {
		super(host);
		this.rowId = rowId;
		this.followUp = options.followUp === true;
		this.editor = new Editor(host.deps.tui, editorTheme(host.deps.theme), { paddingX: 1 });
		if (options.text) this.editor.setText(options.text);
		this.editor.onSubmit = (text) => this.send(text);
		const theme = host.deps.theme;
		// The question takes what the label and the editor leave; a very long one scrolls with page keys.
		this.question = new ScrollLines(
			host,
			(width) => questionLines(host, this.row(), width),
			() => host.bodyRows() - 1 - this.editor.render(host.width()).length,
		);
		this.addChild(new Lines((width) => [theme.fg("accent", this.label())].flatMap((line) => wrap(line, width))));
		this.addChild(this.question);
		this.addChild(this.editor);
	}

	private row(): BoardRow | undefined {
		return feedRow(this.host, this.rowId);
	}

	private label(): string {
		const row = this.row();
		if (!row) return "Reply (the row is gone)";
		const name = clean(row.name);
		if (row.state === "needs_input") return `Answer ${name}`;
		if (row.alive)
			return this.followUp ? `Follow-up for ${name} (after its current turn)` : `Steer ${name} (delivered now)`;
		return `Reply to ${name} (starts a new run)`;
	}

	protected override focusTarget(): Focusable {
		return this.editor;
	}

	keyTable(): KeyEntry[] {
		const pass = (data: string) => this.editor.handleInput(data);
		return [
			{ keys: "submit", help: "send", hint: "send", run: pass },
			{ keys: "newLine", help: "new line", hint: "new line", run: pass },
			this.choices.entry(() => this.row(), this.editor),
			...scrollKeys(this.deps.keys, this.question, { page: "scroll a long question" }, false),
			// Escape closes unless it is dismissing the editor's completion menu.
			{
				keys: "cancel",
				help: "cancel (nothing is sent)",
				hint: "cancel",
				keep: true,
				run: (data) => (this.editor.capturesViewportInput ? pass(data) : this.host.pop(this)),
			},
		];
	}

	override handleInput(data: string): void {
		if (this.sending) return;
		super.handleInput(data);
	}

	protected override otherInput(data: string): void {
		this.editor.handleInput(data);
	}

	private send(text: string): void {
		this.sending = true;
		sendReply(
			this.host,
			this.rowId,
			text,
			this.followUp,
			() => this.host.pop(this),
			(back) => {
				this.sending = false;
				this.editor.setText(back);
			},
		);
		// Empty text or a gone row never reaches the service.
		if (!text.trim() || !this.row()) this.sending = false;
	}
}
