/** The preset option of the new-agent form (dispatch-options.ts): its list item and what picking one changes. */
import type { SettingItem } from "@earendil-works/pi-tui";
import type { BoardDeps } from "./deps.ts";
import { type DispatchChoices, type DispatchForm, initialChoices } from "../view-model/dispatch-choices.ts";
import { NO_PRESET, presetChoices, presetDescription } from "../view-model/preset-choices.ts";

/** The option values the form shows for each choice a preset can set. */
const SHOWN: ReadonlyArray<keyof DispatchChoices & ("target" | "model" | "thinking" | "worktree" | "count")> = [
	"target",
	"model",
	"thinking",
	"worktree",
	"count",
];

export function presetItem(form: DispatchForm): SettingItem {
	const current = form.presets.find((preset) => preset.name === form.choices.preset);
	return {
		id: "preset",
		label: "preset",
		currentValue: form.choices.preset,
		values: [NO_PRESET, ...form.presets.map((preset) => preset.name)],
		description: presetDescription(current),
	};
}

/**
 * Sets the form's choices from the picked preset ("none": the remembered choices); returns the values
 * the option list must now show, by item id.
 */
export function pickPreset(
	form: DispatchForm,
	name: string,
	deps: Pick<BoardDeps, "prefs" | "models" | "cwd">,
): Record<string, string> {
	const c = form.choices;
	const preset = form.presets.find((candidate) => candidate.name === name);
	const remembered = initialChoices(deps.prefs, deps.models, deps.cwd, form.targets.slice(1));
	const next = preset
		? presetChoices(preset, { ...remembered, name: c.name, cwd: c.cwd })
		: { ...remembered, name: c.name, cwd: c.cwd, preset: NO_PRESET };
	Object.assign(c, next);
	return Object.fromEntries(SHOWN.map((key) => [key, c[key]]));
}
