/**
 * New agent: the prompt in pi's Editor (multi-line, bracketed paste, `@` file completion) under one
 * line that says how it will run (`in <cwd> · <target> · <model> · no worktree · 1 attempt`, the
 * last choices remembered); enter starts it. The options key opens the choices first.
 */
import { CombinedAutocompleteProvider, Editor, type Focusable } from "@earendil-works/pi-tui";
import type { BoardRow, PresetSummary } from "../engine/types.ts";
import type { DispatchPrefs } from "../view-model/prefs.ts";
import { LOCAL_TARGET } from "../../../runner/life/vocabulary.mjs";
import { clean } from "../view-model/row-text.ts";
import { fit, message } from "../view-model/ui-types.ts";
import {
	choicesSummary,
	type DispatchChoices,
	type DispatchForm,
	dispatchOptions,
	initialChoices,
} from "../view-model/dispatch-choices.ts";
import { DispatchOptionsView } from "./dispatch-options.ts";
import { keyLabel } from "./keys.ts";
import { wrap } from "./text.ts";
import { editorTheme } from "./theme.ts";
import { type Host, type KeyEntry, Lines, View } from "./view.ts";

export class DispatchView extends View implements DispatchForm {
	/** `@` file completion arrives after the key that asked for it. */
	override readonly uncached = true;
	readonly editor: Editor;
	readonly choices: DispatchChoices;
	/** Where it can run: "local" and the board's targets. */
	readonly targets: readonly string[];
	readonly presets: readonly PresetSummary[];
	private error = "";
	private started = false;
	/** Popped (escaped, or started): a late refusal goes to the status line. */
	private gone = false;
	private readonly onDispatched: (rows: BoardRow[]) => void;

	constructor(host: Host, onDispatched: (rows: BoardRow[]) => void) {
		super(host);
		this.onDispatched = onDispatched;
		let targets: readonly string[] = [];
		try {
			targets = host.deps.targetNames?.() ?? [];
		} catch (error) {
			// A config.json of the wrong shape: this machine still works; say what is wrong with the file.
			this.error = `targets unavailable: ${message(error)}`;
		}
		this.targets = [LOCAL_TARGET, ...targets];
		this.choices = initialChoices(host.deps.prefs, host.deps.models, host.deps.cwd, targets);
		this.presets = readPresets(host, this.choices.cwd);
		this.editor = new Editor(host.deps.tui, editorTheme(host.deps.theme), { paddingX: 1 });
		this.editor.setAutocompleteProvider(new CombinedAutocompleteProvider([], this.choices.cwd));
		this.editor.onSubmit = (text) => this.start(text);
		const theme = host.deps.theme;
		// The choices wrap rather than cut: they are what enter will start.
		this.addChild(
			new Lines((width) => [
				fit(theme.fg("accent", theme.bold("New agent")), width),
				...wrap(this.summary(), width).map((line) => theme.fg("muted", line)),
			]),
		);
		this.addChild(this.editor);
		this.addChild(new Lines((width) => (this.error ? [fit(theme.fg("error", this.error), width)] : [])));
	}

	/** How the agent will run, in one line. */
	summary(): string {
		return choicesSummary(this.choices, this.deps.home);
	}

	protected override focusTarget(): Focusable {
		return this.editor;
	}

	keyTable(): KeyEntry[] {
		const pass = (data: string) => this.editor.handleInput(data);
		return [
			{ keys: "submit", help: "start the agent with the choices shown above the prompt", hint: "start", run: pass },
			{ keys: "newLine", help: "new line", hint: "new line", run: pass },
			{
				keys: "options",
				help: "options first: name, cwd, where, model, thinking, worktree, attempts",
				hint: "options",
				run: () => this.host.push(new DispatchOptionsView(this.host, this)),
			},
			// Escape cancels unless it is closing the editor's completion menu.
			{
				keys: "cancel",
				help: "cancel",
				hint: "cancel",
				keep: true,
				run: (data) => (this.editor.capturesViewportInput ? pass(data) : this.host.pop(this)),
			},
		];
	}

	protected override otherInput(data: string): void {
		this.error = "";
		this.editor.handleInput(data);
	}

	override dispose(): void {
		this.gone = true;
	}

	/** Starts the agent (from the prompt's enter or the options' start key). */
	start(text = this.editor.getExpandedText()): void {
		if (this.started) return;
		if (!text.trim()) {
			this.error = `type a prompt first (${keyLabel(this.deps.keys, "submit")} then starts it)`;
			this.host.reveal(this);
			return;
		}
		if (!this.choices.cwd.trim()) {
			this.error = "cwd is required";
			this.host.reveal(this);
			return;
		}
		this.started = true;
		const options = dispatchOptions(this.choices, text);
		// A preset's choices are the preset's: the remembered ones stay for a form without one.
		if (!options.preset) {
			const prefs: DispatchPrefs = this.deps.prefs;
			Object.assign(prefs, {
				cwd: options.cwd,
				target: this.choices.target,
				model: options.model,
				thinking: options.thinking,
				worktreeMode: options.worktreeMode,
			});
			void this.deps.savePrefs(prefs).catch(() => undefined);
		}
		// Whole: the status line wraps rather than cut what was started.
		const what = clean(options.name ?? text.trim().split("\n")[0]);
		this.error = "starting…";
		this.host.changed();
		// The form stays until the engine answers: a refusal (a target and a cwd that is not a git
		// repository, an unknown target) is shown here with the prompt kept, as a refused reply is.
		this.deps.service.dispatchAttempts(options).then(
			(rows) => {
				this.host.pop(this);
				if (rows.length === 0) return;
				for (const row of rows) this.deps.feed.put(row);
				this.onDispatched(rows);
				this.host.setStatus(
					rows.length > 1
						? `dispatched ${rows.length} attempts of ${what} (c compares them)`
						: `dispatched ${what}`,
				);
			},
			(error: unknown) => {
				this.started = false;
				this.error = `not started: ${message(error)}`;
				if (this.gone) return this.host.setStatus(`dispatch failed: ${message(error)}`);
				this.editor.setText(text);
				this.host.reveal(this);
				this.host.changed();
			},
		);
	}
}

/** The presets for the form (none when the service has none or they cannot be read). */
function readPresets(host: Host, cwd: string): readonly PresetSummary[] {
	try {
		return host.deps.service.presets?.(cwd) ?? [];
	} catch {
		return [];
	}
}
