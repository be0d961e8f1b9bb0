/**
 * The new agent's options on pi-tui's SettingsList: name, cwd, where, model, thinking, worktree, attempts,
 * and "start". The start key starts the agent from anywhere in the list, and the list says so.
 */
import { Input, SettingsList, type Component, type SettingItem } from "@earendil-works/pi-tui";
import { fit } from "../view-model/ui-types.ts";
import {
	COUNTS,
	DEFAULT,
	type DispatchForm,
	THINKING_LEVELS,
	WORKTREE_MODES,
	WORKTREE_TEXT,
	worktreeMode,
	worktreeText,
} from "../view-model/dispatch-choices.ts";
import { pickPreset, presetItem } from "./preset-form.ts";
import { keyLabel, keyMatches } from "./keys.ts";
import { wrap } from "./text.ts";
import { settingsTheme } from "./theme.ts";
import { type Host, type KeyEntry, Lines, View } from "./view.ts";

const FROM_PROMPT = "(from the prompt)";

/** A one-line text submenu for SettingsList (name, cwd): enter keeps, escape drops the edit. */
export class TextSubmenu implements Component {
	private readonly input = new Input();
	private readonly host: Host;
	private readonly done: (value?: string) => void;

	constructor(host: Host, value: string, done: (value?: string) => void) {
		this.host = host;
		this.done = done;
		// A paste leaves the cursor at the end, ready for editing (setValue leaves it at 0).
		if (value) this.input.handleInput(`\x1b[200~${value}\x1b[201~`);
		this.input.focused = true;
	}

	render(width: number): readonly string[] {
		return this.input.render(width);
	}

	invalidate(): void {}

	handleInput(data: string): void {
		const keys = this.host.deps.keys;
		if (keyMatches(keys, data, "confirm")) this.done(this.input.getValue().trim());
		else if (keyMatches(keys, data, "cancel")) this.done(undefined);
		else this.input.handleInput(data);
	}
}

export class DispatchOptionsView extends View {
	private readonly form: DispatchForm;
	private readonly settings: SettingsList;
	/** A name or cwd being typed: every key goes to it. */
	private editing = false;

	constructor(host: Host, form: DispatchForm) {
		super(host);
		this.form = form;
		const c = form.choices;
		const { models, theme } = host.deps;
		const text = (current: string, done: (value?: string) => void) => {
			this.editing = true;
			return new TextSubmenu(host, current === FROM_PROMPT ? "" : current, (value) => {
				this.editing = false;
				done(value);
			});
		};
		const start = `press ${keyLabel(host.deps.keys, "start")} (anywhere here) or enter`;
		const items: SettingItem[] = [
			...(form.presets.length ? [presetItem(form)] : []),
			{ id: "name", label: "name", currentValue: c.name || FROM_PROMPT, submenu: text },
			{ id: "cwd", label: "cwd", currentValue: c.cwd, submenu: text },
			{
				id: "target",
				label: "where",
				currentValue: c.target,
				values: [...form.targets],
				description:
					form.targets.length > 1
						? "a target always runs the agent in its own worktree (code travels by git)"
						: "only this machine: add a target with /agent-board targets add",
			},
			{ id: "model", label: "model", currentValue: c.model, values: [DEFAULT, ...models] },
			{ id: "thinking", label: "thinking", currentValue: c.thinking, values: [DEFAULT, ...THINKING_LEVELS] },
			{
				id: "worktree",
				label: "worktree",
				currentValue: worktreeText(c),
				values: WORKTREE_MODES.map((mode) => WORKTREE_TEXT[mode] ?? mode),
				description: "more than 1 attempt, or a target, always gets its own worktree",
			},
			{
				id: "count",
				label: "attempts",
				currentValue: c.count,
				values: [...COUNTS],
				description: "more than 1 starts an attempt set, each attempt in its own worktree",
			},
			{
				id: "start",
				label: "start",
				currentValue: start,
				values: [start],
				description: "dispatch the agent with these choices",
			},
		];
		this.settings = new SettingsList(
			items,
			10,
			settingsTheme(theme),
			(id, value) => this.changed(id, value),
			() => host.pop(this),
		);
		const startKey = keyLabel(host.deps.keys, "start");
		this.addChild(
			new Lines((width) => [
				fit(theme.fg("accent", theme.bold("New agent: options")), width),
				...wrap(`${startKey} starts the agent from anywhere in this list · ${this.form.summary()}`, width).map(
					(line) => theme.fg("muted", line),
				),
			]),
		);
		this.addChild(this.settings);
	}

	private changed(id: string, value: string): void {
		const c = this.form.choices;
		if (id === "start") {
			this.form.start();
			return;
		}
		if (id === "preset") {
			for (const [key, next] of Object.entries(pickPreset(this.form, value, this.host.deps)))
				this.settings.updateValue(key, next);
			return;
		}
		if (id === "name") {
			c.name = value;
			if (!value) this.settings.updateValue("name", FROM_PROMPT);
		} else if (id === "cwd") c.cwd = value;
		else if (id === "target") c.target = value;
		else if (id === "worktree") c.worktree = worktreeMode(value);
		else if (id === "model" || id === "thinking" || id === "count") c[id] = value;
		// The form says what the summary says: attempts and targets get their own worktree whatever the mode.
		this.settings.updateValue("worktree", worktreeText(c));
	}

	keyTable(): KeyEntry[] {
		const pass = (data: string) => this.settings.handleInput(data);
		return [
			{
				keys: "start",
				help: "start the agent from anywhere in this list",
				hint: "start",
				run: () => this.form.start(),
			},
			{ keys: ["up", "down"], help: "move", run: pass },
			{ keys: "confirm", help: "change the value (name and cwd: type, then enter)", hint: "change", run: pass },
			{ keys: "options", help: "back to the prompt", run: () => this.host.pop(this) },
			{ keys: "cancel", help: "back to the prompt", hint: "back to the prompt", keep: true, run: pass },
			{ keys: "help", help: "this help", hint: "help", run: () => this.host.help(this) },
		];
	}

	override takesText(): boolean {
		return this.editing;
	}

	override handleInput(data: string): void {
		if (this.editing) {
			this.settings.handleInput(data);
			return;
		}
		super.handleInput(data);
	}

	protected override otherInput(data: string): void {
		// Space also cycles a value in SettingsList.
		this.settings.handleInput(data);
	}
}
