/**
 * A target row's workspace at its target goes with its local worktree (the mirror): the target is the one
 * its last run ran on, as that run's run.json recorded it (an edit or removal of the target since does not
 * move the workspace), and its kind removes it. Said in one sentence: removed, or where it stays and why.
 */
import { join } from "node:path";
import { kindOf } from "../../../runner/kinds/kinds.mjs";
import { readRunConfig } from "../../../runner/life/run-config.mjs";
import type { EngineContext } from "./engine-context.ts";
import { sanitizeText } from "./sanitize.ts";
import type { RowMeta } from "./types.ts";

export async function removeFarWork(ctx: EngineContext, meta: RowMeta): Promise<string | undefined> {
	if (!meta.target || !meta.currentRunId) return undefined;
	let target: ReturnType<typeof readRunConfig>["target"];
	try {
		target = readRunConfig(join(ctx.paths.run(meta.id, meta.currentRunId), "run.json")).target;
	} catch (error) {
		return sanitizeText(
			`its workspace on ${meta.target} stays (its run's record cannot be read: ${error instanceof Error ? error.message : String(error)})`,
		);
	}
	if (!target || target.name !== meta.target)
		return `its workspace on ${meta.target} stays (its run's record names no target)`;
	const removed = await kindOf(target).removeWork?.(target, { storeDir: ctx.storeDir, rowId: meta.id });
	// The host's words may be in it: shown as text, never as terminal controls.
	return removed ? sanitizeText(removed.text) : undefined;
}
