/**
 * Dispatch mode: a prompt line, then a small form (name, cwd, model, thinking, worktree mode).
 * Text fields are pi-tui Inputs; choice fields cycle with left/right. Pure state, no service calls:
 * the dashboard turns `options()` into a dispatch.
 */
import { Input } from "@earendil-works/pi-tui";
import type { DispatchOptions, ThinkingLevel, WorktreeMode } from "../types.ts";
import type { DispatchPrefs } from "./prefs.ts";
import { fit, type KeyMatcher, type UiTheme } from "./ui-types.ts";

export const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];
export const WORKTREE_MODES: readonly WorktreeMode[] = ["none", "auto", "worktree"];

type FieldId = "name" | "cwd" | "model" | "thinking" | "worktree";
const FIELDS: readonly FieldId[] = ["name", "cwd", "model", "thinking", "worktree"];

export type FormOutcome = "none" | "submit" | "cancel";

export class DispatchForm {
	stage: "prompt" | "form" = "prompt";
	error = "";
	private readonly prompt = new Input({ prompt: "" });
	private readonly name = new Input({ prompt: "" });
	private readonly cwd: Input;
	private field = 0;
	private modelIndex: number;
	private thinkingIndex: number;
	private worktreeIndex: number;

	private readonly models: readonly string[];

	constructor(models: readonly string[], prefs: DispatchPrefs, defaultCwd: string) {
		this.models = models;
		this.cwd = new Input({ prompt: "" });
		const cwd = prefs.cwd ?? defaultCwd;
		// Paste puts the cursor at the end, ready for editing (setValue leaves it at 0).
		if (cwd) this.cwd.handleInput(`\x1b[200~${cwd}\x1b[201~`);
		// Index 0 is "default": let the worker use pi's configured default model.
		this.modelIndex = prefs.model ? Math.max(0, models.indexOf(prefs.model) + 1) : 0;
		this.thinkingIndex = prefs.thinking ? Math.max(0, THINKING_LEVELS.indexOf(prefs.thinking) + 1) : 0;
		this.worktreeIndex = Math.max(0, WORKTREE_MODES.indexOf(prefs.worktreeMode ?? "none"));
		this.prompt.focused = true;
	}

	options(): DispatchOptions {
		const model = this.modelIndex > 0 ? this.models[this.modelIndex - 1] : undefined;
		const thinking = this.thinkingIndex > 0 ? THINKING_LEVELS[this.thinkingIndex - 1] : undefined;
		const name = this.name.getValue().trim();
		return {
			prompt: this.prompt.getValue().trim(),
			cwd: this.cwd.getValue().trim(),
			...(name ? { name } : {}),
			...(model ? { model } : {}),
			...(thinking ? { thinking } : {}),
			worktreeMode: WORKTREE_MODES[this.worktreeIndex] ?? "none",
		};
	}

	prefs(): DispatchPrefs {
		const o = this.options();
		return { cwd: o.cwd, model: o.model, thinking: o.thinking, worktreeMode: o.worktreeMode };
	}

	private current(): FieldId {
		return FIELDS[this.field] ?? "name";
	}

	private focus(): void {
		this.prompt.focused = this.stage === "prompt";
		this.name.focused = this.stage === "form" && this.current() === "name";
		this.cwd.focused = this.stage === "form" && this.current() === "cwd";
	}

	handleInput(data: string, keys: KeyMatcher): FormOutcome {
		this.error = "";
		if (keys.matches(data, "tui.select.cancel")) return "cancel";
		if (this.stage === "prompt") {
			if (keys.matches(data, "tui.select.confirm")) {
				if (!this.prompt.getValue().trim()) {
					this.error = "type a prompt first";
					return "none";
				}
				this.stage = "form";
				this.focus();
				return "none";
			}
			this.prompt.handleInput(data);
			return "none";
		}
		if (keys.matches(data, "tui.select.confirm")) {
			if (!this.cwd.getValue().trim()) {
				this.error = "cwd is required";
				return "none";
			}
			return "submit";
		}
		if (keys.matches(data, "tui.select.up") || data === "\x1b[Z") {
			this.field = (this.field + FIELDS.length - 1) % FIELDS.length;
		} else if (keys.matches(data, "tui.select.down") || data === "\t") {
			this.field = (this.field + 1) % FIELDS.length;
		} else {
			const field = this.current();
			const step = keys.matches(data, "tui.editor.cursorLeft") ? -1 : keys.matches(data, "tui.editor.cursorRight") ? 1 : 0;
			if (field === "name") this.name.handleInput(data);
			else if (field === "cwd") this.cwd.handleInput(data);
			else if (step !== 0) this.cycle(field, step);
		}
		this.focus();
		return "none";
	}

	private cycle(field: FieldId, step: number): void {
		const wrap = (i: number, n: number) => (i + step + n) % n;
		if (field === "model") this.modelIndex = wrap(this.modelIndex, this.models.length + 1);
		if (field === "thinking") this.thinkingIndex = wrap(this.thinkingIndex, THINKING_LEVELS.length + 1);
		if (field === "worktree") this.worktreeIndex = wrap(this.worktreeIndex, WORKTREE_MODES.length);
	}

	render(width: number, theme: UiTheme): string[] {
		const lines: string[] = [];
		const inner = Math.max(1, width - 10);
		lines.push(fit(theme.fg("accent", theme.bold("New agent")), width));
		lines.push(fit(`${theme.fg("muted", "Prompt  ")}${this.stage === "prompt" ? (this.prompt.render(inner)[0] ?? "") : this.prompt.getValue()}`, width));
		if (this.stage === "prompt") {
			lines.push(fit(theme.fg("dim", "enter: next  esc: cancel"), width));
		} else {
			const o = this.options();
			const values: Record<FieldId, string> = {
				name: this.current() === "name" ? (this.name.render(inner)[0] ?? "") : this.name.getValue() || theme.fg("dim", "(from prompt)"),
				cwd: this.current() === "cwd" ? (this.cwd.render(inner)[0] ?? "") : this.cwd.getValue(),
				model: `< ${o.model ?? "default"} >`,
				thinking: `< ${o.thinking ?? "default"} >`,
				worktree: `< ${o.worktreeMode ?? "none"} >`,
			};
			FIELDS.forEach((field, i) => {
				const label = `${i === this.field ? ">" : " "} ${field.padEnd(10)}`;
				lines.push(fit(`${i === this.field ? theme.fg("accent", label) : theme.fg("muted", label)}${values[field]}`, width));
			});
			lines.push(fit(theme.fg("dim", "up/down: field  left/right: choose  enter: start  esc: cancel"), width));
		}
		if (this.error) lines.push(fit(theme.fg("error", this.error), width));
		return lines;
	}
}
