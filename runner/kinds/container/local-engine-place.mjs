// Where a container target's runs go when its engine is this machine's (no --engine-host): one container
// per run, its workspace a clone under the store, containers no run owns reconciled away. The engine code
// loads on first use: pi's start-up reads the kinds for their flags only.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { targetPaths } from "../../store/store-layout.mjs";

/** @typedef {import("./container-argv.mjs").ContainerTarget} ContainerTarget */

/** A container target without an engine host is a ContainerTarget (container-kind.mjs states its fields). @param {import("../kind.mjs").TargetSnapshot} target */
const own = (target) => /** @type {ContainerTarget} */ (target);

/** @type {import("./container-kind.mjs").EnginePlace} */
export const localEnginePlace = {
	async check(target, options) {
		return (await import("./container-transport.mjs")).check(own(target), options);
	},
	async driver(target) {
		return (await import("./driver-container.mjs")).containerDriver(own(target));
	},
	// The row's clone on this machine (its .git is the agent's, so no git runs in it).
	async removeWork(target, { storeDir, rowId }) {
		const { work } = targetPaths(join(storeDir, "targets", target.name), rowId);
		try {
			rmSync(work, { recursive: true, force: true });
			return { ok: true, text: `removed its container workspace too (${work})` };
		} catch (error) {
			return {
				ok: false,
				text: `its container workspace stays at ${work}: ${error instanceof Error ? error.message : String(error)}`,
			};
		}
	},
	forget() {
		// Nothing of the target's own lives on: each run's container went with its run.
	},
	async reconcile(storeDir, target, runIsLive) {
		return (await import("./container-transport.mjs")).reconcile(storeDir, own(target), runIsLive);
	},
};
