/**
 * The new-agent form's first option: a preset. Picking one sets the form's choices from it (what it
 * does not say keeps the form's value); "none" puts back the remembered choices. A dispatch with a
 * preset does not change the remembered choices: they stay for a form without one.
 */
import { LOCAL_TARGET } from "../../../runner/life/vocabulary.mjs";
import type { PresetSummary } from "../engine/types.ts";
import type { DispatchChoices } from "./dispatch-choices.ts";

export const NO_PRESET = "none";

/** The choices a preset gives (only what it names and the form offers). */
export function presetChoices(preset: PresetSummary, base: DispatchChoices): DispatchChoices {
	const next: DispatchChoices = { ...base, preset: preset.name };
	if (preset.model) next.model = preset.model;
	if (preset.thinking) next.thinking = preset.thinking;
	// A target the form does not list is still passed: the dispatch refuses it with the engine's reason.
	if (preset.target) next.target = preset.target;
	if (preset.worktreeMode) next.worktree = preset.worktreeMode;
	if (preset.attempts) next.count = String(preset.attempts);
	return next;
}

/** The preset's name and what it sets, for the option's description. */
export function presetDescription(preset: PresetSummary | undefined): string {
	if (!preset)
		return "a preset sets model, where, mode and budget from ~/.pi/agent/agents/<name>.md (or a trusted project's .pi/agents/)";
	if (preset.error) return `cannot be used: ${preset.error}`;
	const parts = [
		preset.description,
		preset.model && `model ${preset.model}`,
		preset.target && preset.target !== LOCAL_TARGET && `on ${preset.target}`,
		preset.ponytailMode && `ponytail ${preset.ponytailMode}`,
		preset.budget && `budget ${preset.budget.tokens ?? `$${preset.budget.cost}`}`,
	];
	return parts.filter(Boolean).join(" · ");
}
