/**
 * A yes/no question, drawn whole (wrapped, never cut) below the view it asks about, which stays in
 * sight (the list with the row to stop), with the action to run on yes.
 */
import { message } from "../view-model/ui-types.ts";
import { wrap } from "./text.ts";
import { type Host, type KeyEntry, Lines, View } from "./view.ts";

export class ConfirmView extends View {
	override readonly overlay = true;
	private readonly action: () => Promise<unknown> | unknown;

	constructor(
		host: Host,
		question: string,
		action: () => Promise<unknown> | unknown,
		details: readonly string[] = [],
	) {
		super(host);
		this.action = action;
		const theme = host.deps.theme;
		this.addChild(
			new Lines((width) => [
				...wrap(`(y/n) ${question}`, width).map((line) => theme.fg("warning", line)),
				...details.flatMap((detail) => wrap(detail, width - 2).map((line) => `  ${theme.fg("muted", line)}`)),
			]),
		);
	}

	keyTable(): KeyEntry[] {
		const yes = () => {
			this.host.pop(this);
			Promise.resolve()
				.then(() => this.action())
				.catch((error: unknown) => this.host.setStatus(`failed: ${message(error)}`));
		};
		return [
			{ keys: ["yes", "confirm"], help: "yes", hint: "yes", run: yes },
			{ keys: ["no", "cancel"], help: "no", hint: "no", run: () => this.host.pop(this) },
		];
	}

	override handleInput(data: string): void {
		// Y and N as typed with shift count too.
		super.handleInput(data === "Y" ? "y" : data === "N" ? "n" : data);
	}
}
