/**
 * A target row's workspace at its target goes with its local worktree (the mirror): the target is the one
 * its last run ran on, as that run's run.json recorded it (an edit or removal of the target since does not
 * move the workspace). Said in one sentence: removed, or where it stays and why.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { removeTargetWork } from "../../../runner/kinds/remove-work.mjs";
import { sanitizeText } from "../engine/sanitize.ts";
import type { EngineContext } from "../engine/engine-context.ts";
import type { RowMeta } from "../engine/types.ts";

export async function removeFarWork(ctx: EngineContext, meta: RowMeta): Promise<string | undefined> {
	if (!meta.target || !meta.currentRunId) return undefined;
	let target: Parameters<typeof removeTargetWork>[0] | undefined;
	try {
		const config = JSON.parse(readFileSync(join(ctx.paths.run(meta.id, meta.currentRunId), "run.json"), "utf8")) as { target?: Parameters<typeof removeTargetWork>[0] };
		target = config.target;
	} catch (error) {
		return `its workspace on ${meta.target} stays (its run's record cannot be read: ${error instanceof Error ? error.message : String(error)})`;
	}
	if (!target || typeof target !== "object" || target.name !== meta.target) return `its workspace on ${meta.target} stays (its run's record names no target)`;
	// The host's words may be in it: shown as text, never as terminal controls.
	return sanitizeText((await removeTargetWork(target, { storeDir: ctx.storeDir, rowId: meta.id })).text);
}
