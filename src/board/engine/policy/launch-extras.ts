/**
 * What a run's run.json carries for the supervisor and the preset: the rules files that apply (the
 * preset's, the trusted project's, the user's) and the facts the rules name, and the preset's extra
 * system text. Read again at each launch, so an edited preset applies to the row's next run; a preset
 * removed since leaves the run without it.
 */
import type { RunConfig } from "../../../../runner/life/run-config.mjs";
import type { EngineContext } from "../engine-context.ts";
import type { RowMeta } from "../types.ts";
import { agentDirOf, rulesPaths } from "./rules-paths.ts";
import { loadPresets } from "./presets.ts";

export function launchExtras(
	ctx: EngineContext,
	meta: RowMeta,
): { supervise: NonNullable<RunConfig["supervise"]>; systemPrompt?: string } {
	const agentDir = agentDirOf(ctx.env);
	const preset = meta.preset
		? loadPresets(meta.cwd, agentDir).find((candidate) => candidate.name === meta.preset && !candidate.error)
		: undefined;
	return {
		supervise: {
			rules: rulesPaths(meta.cwd, agentDir, preset?.rules),
			rowName: meta.name,
			...(meta.preset ? { preset: meta.preset } : {}),
			...(meta.target ? { target: meta.target } : {}),
		},
		...(preset?.systemPrompt ? { systemPrompt: preset.systemPrompt } : {}),
	};
}
