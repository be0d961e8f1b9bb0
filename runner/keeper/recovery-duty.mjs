// The keeper's first duty: what only an open board's tick or `list` used to do, with no board open.
// Each pass pumps the queue (a freed slot, space back on a full disk, a returned pool member, a limit
// raised: the pump reads them all afresh), then looks at every run not over and writes down what a
// reader would derive for one nobody owns (orphan.mjs settleUnowned: its end, a new link, or its dead
// claim back in the queue), then pumps again when that freed a slot.
import { derive, settleUnowned } from "../life/orphan.mjs";
import { pumpQueue, queuedNames } from "../life/queue.mjs";
import { openRuns } from "./store-runs.mjs";

/** @typedef {{ maxConcurrent: number, node: string, env: NodeJS.ProcessEnv, log: (line: string) => void, wake?: () => void }} KeeperContext */

/** @param {string} storeRoot @param {KeeperContext} ctx */
function pump(storeRoot, ctx) {
	try {
		const { error } = pumpQueue(storeRoot, { maxConcurrent: ctx.maxConcurrent, node: ctx.node, env: ctx.env });
		// The rows say why (a full disk, a bad config.json); the log keeps it for whoever asks.
		if (error) ctx.log(`queue: ${error}`);
	} catch (error) {
		ctx.log(`queue: ${error instanceof Error ? error.message : String(error)}`);
	}
}

const SWEEP_MS = 10_000;
let lastSweep = 0;

/** @param {string} storeRoot */
function safeQueued(storeRoot) {
	try {
		return queuedNames(storeRoot).length > 0;
	} catch {
		// Unreadable: the pump says why.
		return true;
	}
}

/** @type {import("./duties.mjs").Duty} */
export const recoveryDuty = {
	name: "queue",
	wanted(storeRoot) {
		try {
			if (queuedNames(storeRoot).length > 0) return true;
		} catch {
			// An unreadable queue: the runs below still say whether anything is left to keep.
		}
		return openRuns(storeRoot).length > 0;
	},
	async pass(storeRoot, ctx) {
		// A pump with nothing queued sweeps stale slots (a /proc scan): at most every SWEEP_MS, not every pass.
		const queued = safeQueued(storeRoot);
		if (queued || Date.now() - lastSweep >= SWEEP_MS) {
			if (!queued) lastSweep = Date.now();
			pump(storeRoot, ctx);
		}
		let freed = false;
		for (const run of openRuns(storeRoot)) {
			const { pending } = derive(storeRoot, run.runDir, run.status, run);
			if (!pending) continue;
			try {
				const outcome = await settleUnowned(storeRoot, run.runDir, {
					...(pending === "relink" && run.target ? { target: run.target } : {}),
					spawnWith: { node: ctx.node, env: ctx.env },
				});
				if (outcome !== "owned") {
					freed = true;
					ctx.log(`${run.rowId}: ${outcome}`);
				}
			} catch (error) {
				// A store that refuses the write (full, or read-only under us): the next pass tries again.
				ctx.log(`${run.rowId}: ${error instanceof Error ? error.message : String(error)}`);
			}
		}
		if (freed) pump(storeRoot, ctx);
	},
};
