/**
 * A target run whose link died (killed, the machine restarted) is not a dead run: it goes on at the
 * target. The reader that finds it takes the row lock and starts a new link on the run's slot, which
 * resumes the mirror where the local files stop; the new link's record goes in at once, so the next
 * reader sees an owner. A link that keeps dying is given up after a few tries and the run recorded
 * as failed with where to look.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeJsonAtomic } from "../../../runner/store/fs-util.mjs";
import { processStartTime, RUN_TAG } from "../../../runner/store/proc.mjs";
import { LINK_PATH, spawnRunner } from "../../../runner/life/spawn-runner.mjs";
import { tryLockRow } from "../../../runner/store/row-lock.mjs";
import { slotOfRun, slotsOf } from "../../../runner/life/slots.mjs";
import { runEnded } from "../../../runner/life/state-rules.mjs";
import { nodeCommand } from "../engine/commands.ts";
import type { EngineContext } from "../engine/engine-context.ts";
import { FileCache, readStatus } from "../engine/store.ts";

/** Links started for one run at most (a link that dies at once every time must not loop forever). */
const MAX_RESPAWNS = 8;

/**
 * For a caller holding the row lock. Returns true when a link now owns the run; false when it cannot
 * be respawned (ended, never started, owned, or given up): the caller records the end then.
 */
export function respawnLinkLocked(ctx: EngineContext, runDir: string, target: string): boolean {
	const status = readStatus(runDir, new FileCache());
	if (runEnded(status) || !existsSync(join(runDir, "runner.json"))) return false;
	const countPath = join(runDir, "link-respawns.json");
	let count = 0;
	try {
		count = Number(JSON.parse(readFileSync(countPath, "utf8")).count) || 0;
	} catch {
		// None yet.
	}
	if (count >= MAX_RESPAWNS) return false;
	writeJsonAtomic(countPath, { count: count + 1, at: Date.now() });
	const slots = slotsOf(ctx.storeDir, target);
	// Its slot is still held (the run is not over): the new link takes it over.
	const slot = slotOfRun(slots.dir, status.runId) ?? join(slots.dir, "slot-none.json");
	const child = spawnRunner(runDir, slot, nodeCommand(ctx.env), { ...ctx.env, [RUN_TAG]: status.runId }, LINK_PATH);
	const start = child.pid ? processStartTime(child.pid) : undefined;
	if (child.pid && start) writeJsonAtomic(join(runDir, "runner.json"), { pid: child.pid, start });
	return true;
}

/** respawnLinkLocked under the row lock; false when another process holds it (it is deciding). */
export function respawnLink(ctx: EngineContext, rowDir: string, runDir: string, target: string, stillOrphan: () => boolean): boolean {
	const release = tryLockRow(rowDir);
	if (!release) return false;
	try {
		return stillOrphan() && respawnLinkLocked(ctx, runDir, target);
	} finally {
		release();
	}
}
