/** Rename a row: one line (pi-tui's Input) holding the current name. */
import { type Focusable, Input } from "@earendil-works/pi-tui";
import type { BoardRow } from "../engine/types.ts";
import { clean } from "../view-model/row-text.ts";
import { fit } from "../view-model/ui-types.ts";
import { type Host, type KeyEntry, Lines, View } from "./view.ts";

export class RenameView extends View {
	private readonly input = new Input();
	private readonly row: BoardRow;

	constructor(host: Host, row: BoardRow) {
		super(host);
		this.row = row;
		// A paste leaves the cursor at the end, ready for editing (setValue leaves it at 0).
		this.input.handleInput(`\x1b[200~${clean(row.name)}\x1b[201~`);
		this.addChild(new Lines((width) => [fit(host.deps.theme.fg("accent", `Rename ${clean(row.name)}`), width)]));
		this.addChild(this.input);
	}

	protected override focusTarget(): Focusable {
		return this.input;
	}

	keyTable(): KeyEntry[] {
		return [
			{ keys: "submit", help: "rename", hint: "rename", run: () => this.submit() },
			{ keys: "cancel", help: "keep the name", hint: "cancel", run: () => this.host.pop(this) },
		];
	}

	protected override otherInput(data: string): void {
		this.input.handleInput(data);
	}

	private submit(): void {
		const name = this.input.getValue().replace(/\s+/g, " ").trim();
		const row = this.row;
		this.host.pop(this);
		if (!name || name === row.name) this.host.setStatus("name unchanged");
		else void this.host.run(`renamed to ${name}`, row.id, () => this.deps.service.rename(row.id, name));
	}
}
