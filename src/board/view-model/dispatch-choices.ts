/** The new agent's choices: where they start (the last ones, remembered), the one-line summary, the dispatch they make. */
import { LOCAL_TARGET } from "../../../runner/life/vocabulary.mjs";
import { THINKING_LEVELS, WORKTREE_MODES } from "../../../runner/life/vocabulary.mjs";
import { MAX_ATTEMPTS } from "../engine/dispatch-checks.ts";
import type { DispatchOptions, PresetSummary } from "../engine/types.ts";
import type { DispatchPrefs } from "./prefs.ts";
import { shortPath } from "./row-text.ts";

export { THINKING_LEVELS, WORKTREE_MODES };
export const DEFAULT = "default";
/** Attempts per dispatch: 1 to the engine's limit. */
export const COUNTS: readonly string[] = Array.from({ length: MAX_ATTEMPTS }, (_, i) => String(i + 1));

export interface DispatchChoices {
	/** A preset's name, or "none". */
	preset: string;
	name: string;
	cwd: string;
	/** Where it runs: "local" or a target's name. */
	target: string;
	model: string;
	thinking: string;
	worktree: string;
	count: string;
}

/** What the options list needs of the form it edits. */
export interface DispatchForm {
	readonly choices: DispatchChoices;
	/** "local" and the board's targets. */
	readonly targets: readonly string[];
	/** The presets a dispatch from the form's cwd may name. */
	readonly presets: readonly PresetSummary[];
	summary(): string;
	start(): void;
}

export function initialChoices(
	prefs: DispatchPrefs,
	models: readonly string[],
	cwd: string,
	targets: readonly string[] = [],
): DispatchChoices {
	return {
		preset: "none",
		name: "",
		cwd: prefs.cwd ?? cwd,
		// A remembered target that was removed since falls back to this machine.
		target: prefs.target && targets.includes(prefs.target) ? prefs.target : LOCAL_TARGET,
		model: prefs.model && models.includes(prefs.model) ? prefs.model : DEFAULT,
		thinking: prefs.thinking ?? DEFAULT,
		worktree: prefs.worktreeMode ?? "none",
		count: "1",
	};
}

/** Each worktree mode in the words the form and its summary both show. */
export const WORKTREE_TEXT: Record<string, string> = {
	none: "no worktree",
	auto: "own worktree if the repo is busy",
	worktree: "own worktree",
};

/** The mode a form value names (its words, or the mode itself). */
export function worktreeMode(value: string): string {
	return Object.entries(WORKTREE_TEXT).find(([, text]) => text === value)?.[0] ?? value;
}

/** The worktree the agent will get, in words: attempts and targets always get their own. */
export function worktreeText(c: DispatchChoices): string {
	// Code travels to a target by git, so a target run always gets its own worktree.
	if (Number(c.count) > 1) return "each in its own worktree";
	if (c.target !== LOCAL_TARGET) return "own worktree (always, on a target)";
	return WORKTREE_TEXT[c.worktree] ?? c.worktree;
}

/** `in <cwd> · <target> · <model> · no worktree · 1 attempt`: how the agent will run. */
export function choicesSummary(c: DispatchChoices, home?: string): string {
	const count = Number(c.count);
	const remote = c.target !== LOCAL_TARGET;
	const parts = [
		`in ${shortPath(c.cwd, home)}`,
		remote ? `on ${c.target}` : LOCAL_TARGET,
		c.model === DEFAULT ? "pi's default model" : c.model,
	];
	if (c.preset !== "none") parts.unshift(`preset ${c.preset}`);
	if (c.thinking !== DEFAULT) parts.push(`thinking ${c.thinking}`);
	parts.push(worktreeText(c), `${count} attempt${count === 1 ? "" : "s"}`);
	if (c.name.trim()) parts.push(`named ${c.name.trim()}`);
	return parts.join(" · ");
}

export function dispatchOptions(c: DispatchChoices, prompt: string): DispatchOptions {
	const model = c.model !== DEFAULT ? c.model : undefined;
	const thinking = THINKING_LEVELS.find((level) => level === c.thinking);
	const worktreeMode = WORKTREE_MODES.find((mode) => mode === c.worktree) ?? "none";
	const name = c.name.trim();
	const count = Number(c.count);
	const target = c.target !== LOCAL_TARGET ? { target: c.target } : {};
	const preset = c.preset !== "none" ? { preset: c.preset } : {};
	return {
		prompt,
		cwd: c.cwd.trim(),
		...preset,
		...(name ? { name } : {}),
		...(model ? { model } : {}),
		...(thinking ? { thinking } : {}),
		worktreeMode,
		...(count > 1 ? { count } : {}),
		...target,
	};
}
