/**
 * Dispatch: pi-tui's Editor for the prompt (multi-line, bracketed paste, pi's submit/newline keys,
 * `@` file completion), then pi-tui's SettingsList for name, cwd, model, thinking, worktree mode and attempts,
 * with "start" as its last item. Pure state: the dashboard turns `options()` into a dispatch.
 */
import { CombinedAutocompleteProvider, Editor, Input, SettingsList, type Component, type SettingItem, type TUI } from "@earendil-works/pi-tui";
import { THINKING_LEVELS, WORKTREE_MODES } from "../../../runner/vocabulary.mjs";
import { MAX_ATTEMPTS } from "../attempts.ts";
import type { DispatchOptions } from "../types.ts";
import { keyMatches } from "./key-table.ts";
import type { DispatchPrefs } from "./prefs.ts";
import { editorTheme, fit, type KeyMatcher, settingsTheme, type UiTheme } from "./ui-types.ts";

const DEFAULT = "default";
const START_HINT = "press enter to start";
/** Attempts per dispatch: 1 to the engine's limit. */
const COUNTS: readonly string[] = Array.from({ length: MAX_ATTEMPTS }, (_, i) => String(i + 1));

export type FormOutcome = "none" | "submit" | "cancel";

/** A one-line text submenu for SettingsList (name, cwd): enter keeps, escape drops the edit. */
class TextSubmenu implements Component {
	private readonly input = new Input({ prompt: "" });
	private readonly done: (value?: string) => void;
	private readonly keys: KeyMatcher;

	constructor(value: string, keys: KeyMatcher, done: (value?: string) => void) {
		this.keys = keys;
		this.done = done;
		// Paste puts the cursor at the end, ready for editing (setValue leaves it at 0).
		if (value) this.input.handleInput(`\x1b[200~${value}\x1b[201~`);
		this.input.focused = true;
	}

	render(width: number): string[] {
		return this.input.render(width);
	}

	invalidate(): void {}

	handleInput(data: string): void {
		if (keyMatches(this.keys, data, "confirm")) this.done(this.input.getValue().trim());
		else if (keyMatches(this.keys, data, "cancel")) this.done(undefined);
		else this.input.handleInput(data);
	}
}

export class DispatchForm {
	stage: "prompt" | "form" = "prompt";
	error = "";
	readonly editor: Editor;
	readonly settings: SettingsList;
	private prompt = "";
	private readonly values: Record<"name" | "cwd" | "model" | "thinking" | "worktree" | "count", string>;
	private outcome: FormOutcome = "none";

	constructor(tui: TUI, theme: UiTheme, keys: KeyMatcher, models: readonly string[], prefs: DispatchPrefs, defaultCwd: string) {
		const cwd = prefs.cwd ?? defaultCwd;
		this.values = {
			name: "",
			cwd,
			model: prefs.model && models.includes(prefs.model) ? prefs.model : DEFAULT,
			thinking: prefs.thinking ?? DEFAULT,
			worktree: prefs.worktreeMode ?? "none",
			count: "1",
		};
		this.editor = new Editor(tui, editorTheme(theme), { paddingX: 1 });
		this.editor.setAutocompleteProvider(new CombinedAutocompleteProvider([], cwd));
		this.editor.onSubmit = (text) => {
			if (!text.trim()) {
				this.error = "type a prompt first";
				return;
			}
			this.prompt = text;
			this.stage = "form";
		};
		const text = (current: string, done: (value?: string) => void) => new TextSubmenu(current === "(from prompt)" ? "" : current, keys, done);
		const items: SettingItem[] = [
			{ id: "name", label: "name", currentValue: "(from prompt)", submenu: text },
			{ id: "cwd", label: "cwd", currentValue: cwd, submenu: text },
			{ id: "model", label: "model", currentValue: this.values.model, values: [DEFAULT, ...models] },
			{ id: "thinking", label: "thinking", currentValue: this.values.thinking, values: [DEFAULT, ...THINKING_LEVELS] },
			{ id: "worktree", label: "worktree", currentValue: this.values.worktree, values: [...WORKTREE_MODES] },
			{ id: "count", label: "attempts", currentValue: "1", values: [...COUNTS], description: "more than 1 starts an attempt set, each attempt in its own worktree" },
			{ id: "start", label: "start", currentValue: START_HINT, values: [START_HINT], description: "dispatch the agent with these choices" },
		];
		this.settings = new SettingsList(items, 9, settingsTheme(theme), (id, value) => this.onSetting(id, value), () => (this.outcome = "cancel"));
		this.editor.focused = true;
	}

	private onSetting(id: string, value: string): void {
		if (id === "start") {
			if (!this.values.cwd.trim()) this.error = "cwd is required";
			else this.outcome = "submit";
			return;
		}
		if (id === "name") this.values.name = value;
		else if (id === "cwd") this.values.cwd = value;
		else if (id === "model" || id === "thinking" || id === "worktree" || id === "count") this.values[id] = value;
		if (id === "name" && !value) this.settings.updateValue("name", "(from prompt)");
	}

	set focused(value: boolean) {
		this.editor.focused = value && this.stage === "prompt";
	}

	options(): DispatchOptions {
		const model = this.values.model !== DEFAULT ? this.values.model : undefined;
		const thinking = THINKING_LEVELS.find((level) => level === this.values.thinking);
		const worktreeMode = WORKTREE_MODES.find((mode) => mode === this.values.worktree) ?? "none";
		const name = this.values.name.trim();
		const count = Number(this.values.count);
		return {
			prompt: this.prompt,
			cwd: this.values.cwd.trim(),
			...(name ? { name } : {}),
			...(model ? { model } : {}),
			...(thinking ? { thinking } : {}),
			worktreeMode,
			...(count > 1 ? { count } : {}),
		};
	}

	prefs(): DispatchPrefs {
		const o = this.options();
		return { cwd: o.cwd, model: o.model, thinking: o.thinking, worktreeMode: o.worktreeMode };
	}

	handleInput(data: string, keys: KeyMatcher): FormOutcome {
		this.error = "";
		this.outcome = "none";
		if (this.stage === "prompt") {
			// Escape cancels unless it is closing the editor's completion menu.
			if (keyMatches(keys, data, "cancel") && !this.editor.capturesViewportInput) return "cancel";
			this.editor.handleInput(data);
			this.editor.focused = this.stage === "prompt";
			return "none";
		}
		this.settings.handleInput(data);
		return this.outcome;
	}

	render(width: number, theme: UiTheme): string[] {
		const lines: string[] = [fit(theme.fg("accent", theme.bold("New agent")), width)];
		if (this.stage === "prompt") {
			lines.push(...this.editor.render(width));
		} else {
			const first = this.prompt.split("\n");
			lines.push(fit(`${theme.fg("muted", "prompt  ")}${first[0] ?? ""}${first.length > 1 ? theme.fg("dim", ` (+${first.length - 1} lines)`) : ""}`, width));
			lines.push(...this.settings.render(width).map((line) => fit(line, width)));
		}
		if (this.error) lines.push(fit(theme.fg("error", this.error), width));
		return lines;
	}
}
