/**
 * A board view: a pi-tui Container (as pi's own selectors are) that owns its state and its keys. Its
 * key table is the one place where a key, its help line, its hint and why it cannot act now are
 * written (lazygit's GetDisabledReason); the board draws the hint line and the help from it, and a
 * disabled key says its reason on the status line. Drawing reads state and changes none.
 */
import { type Component, Container, type Focusable } from "@earendil-works/pi-tui";
import type { BoardRow } from "../engine/types.ts";
import type { BoardDeps, BoardResult } from "./deps.ts";
import { type Action, keyMatches, keysLabel } from "./keys.ts";

/** What a view may ask of the board that holds it. */
export interface Host {
	readonly deps: BoardDeps;
	push(view: View): void;
	/** Removes `view` and every view above it. */
	pop(view: View): void;
	/** Removes every view above `view`, so it is on top again. */
	reveal(view: View): void;
	close(result: BoardResult): void;
	setStatus(text: string): void;
	/** Rows the top view may draw (the board keeps its header, status and hint lines). */
	bodyRows(): number;
	/** Width of the last frame, for views that scroll by pages of their content. */
	width(): number;
	changed(): void;
	now(): number;
	/** Opens help for `view`'s keys. */
	help(view: View): void;
	/** Runs a service action, reports it on the status line, then re-reads that row. */
	run(label: string, id: string, action: () => Promise<unknown>): Promise<void>;
}

export interface KeyEntry {
	keys: Action | readonly Action[];
	/** Help line; entries without one do not show in help. */
	help?: string;
	/** Hint line label; entries without one do not show in the hint line. */
	hint?: string;
	/**
	 * Why the action cannot run now ("<name> has no worktree: no diff"), or undefined when it can. While
	 * there is a reason the hint hides, and the key puts the reason on the status line instead of acting.
	 */
	disabled?: () => string | undefined;
	/** The hint stays however narrow the line (help and the way back). */
	keep?: boolean;
	/** It moves the list's cursor (navigation). */
	moves?: boolean;
	/** It acts on the selected row (a list that just changed under the cursor asks for it again). */
	actsOnRow?: boolean;
	run(data: string): void;
}

export abstract class View extends Container implements Focusable {
	protected readonly host: Host;
	private isFocused = false;
	/** A status line answers the last action; in views that set this, the next key retires it. */
	readonly retiresStatus: boolean = false;
	/** Drawn afresh on every frame: it changes without a key or a feed report (an editor's async completion). */
	readonly uncached: boolean = false;
	/** A question about the view beneath: drawn below it, so what it asks about stays in sight. */
	readonly overlay: boolean = false;

	constructor(host: Host) {
		super();
		this.host = host;
	}

	protected get deps(): BoardDeps {
		return this.host.deps;
	}

	/** Every key of this view, in help order; the first entry whose key matches runs. */
	abstract keyTable(): KeyEntry[];

	get focused(): boolean {
		return this.isFocused;
	}

	/** Focusable: the editor inside draws pi's cursor marker, so IME candidates appear at the caret. */
	set focused(value: boolean) {
		this.isFocused = value;
		const target = this.focusTarget();
		if (target) target.focused = value;
	}

	protected focusTarget(): Focusable | undefined {
		return undefined;
	}

	/** A text field has the keys now (an editor, an input): its alt+letter keys edit text. */
	takesText(): boolean {
		return this.focusTarget() !== undefined;
	}

	/** The first entry of the key table that `data` is a key of. */
	entryFor(data: string): KeyEntry | undefined {
		return this.keyTable().find((entry) =>
			(typeof entry.keys === "string" ? [entry.keys] : entry.keys).some((action) =>
				keyMatches(this.deps.keys, data, action),
			),
		);
	}

	handleInput(data: string): void {
		const entry = this.entryFor(data);
		if (!entry) {
			this.otherInput(data);
			return;
		}
		const reason = entry.disabled?.();
		if (reason) this.host.setStatus(reason);
		else entry.run(data);
	}

	/** Keys no entry claimed (an editor's typing). */
	protected otherInput(_data: string): void {}

	hints(): { keys: string; label: string; keep?: boolean }[] {
		return this.keyTable()
			.filter((entry) => entry.hint && !entry.disabled?.())
			.map((entry) => ({
				keys: keysLabel(this.deps.keys, entry.keys, true),
				label: entry.hint ?? "",
				keep: entry.keys === "help" || entry.keep === true,
			}));
	}

	/** A feed report: these rows changed (`relisted`: the whole store was read again). */
	onRows(_ids: readonly string[], _relisted: boolean): void {}

	dispose(): void {}
}

/** A component drawn by a pure function of the width (live text that pi-tui's fixed-text parts cannot follow). */
export class Lines implements Component {
	private readonly draw: (width: number) => string[];

	constructor(draw: (width: number) => string[]) {
		this.draw = draw;
	}

	render(width: number): string[] {
		return this.draw(width);
	}

	invalidate(): void {}
}

/** The row a view acts on, looked up fresh in the feed (rows are replaced when they change). */
export function feedRow(host: Host, id: string | undefined): BoardRow | undefined {
	return id ? host.deps.feed.row(id) : undefined;
}
