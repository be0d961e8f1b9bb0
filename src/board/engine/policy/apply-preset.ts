/**
 * A dispatch that names a preset: the preset fills every option the dispatch did not give (what the
 * caller chose wins), and the row remembers the preset's name, so each of its runs gets the preset's
 * extra system text and rules (launch-extras.ts).
 */
import type { DispatchOptions } from "../types.ts";
import { findPreset, type Preset } from "./presets.ts";

export function applyPreset(options: DispatchOptions, preset: Preset): DispatchOptions {
	return {
		...options,
		preset: preset.name,
		model: options.model ?? preset.model,
		thinking: options.thinking ?? preset.thinking,
		ponytailMode: options.ponytailMode ?? preset.ponytailMode,
		target: options.target ?? preset.target,
		worktreeMode: options.worktreeMode ?? preset.worktreeMode,
		count: options.count ?? preset.attempts,
		budget: options.budget ?? preset.budget,
	};
}

/** The options with their preset applied (none named: unchanged); an unknown or broken preset refuses the dispatch. */
export function withPreset(options: DispatchOptions, agentDir: string): DispatchOptions {
	if (options.preset === undefined) return options;
	return applyPreset(options, findPreset(options.preset, options.cwd, agentDir));
}
