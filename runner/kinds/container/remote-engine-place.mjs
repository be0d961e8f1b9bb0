// Where a container target's runs go when its engine is on another machine (--engine-host): one station
// container there for all its runs, code and files by the engine's own exec and cp (engine-remote.mjs).
// Its runs are processes of the station (stopped by its host-agent), not containers of their own.
import { spawnSync } from "node:child_process";
import { engineEnv } from "./container-engine.mjs";
import { remoteEngineArgs, stationName } from "./engine-remote.mjs";

/** @typedef {import("./engine-station.mjs").RemoteTarget} RemoteTarget */

/** A container target with an engine host is a RemoteTarget (container-kind.mjs states its fields). @param {import("../kind.mjs").TargetSnapshot} target */
const own = (target) => /** @type {RemoteTarget} */ (/** @type {unknown} */ (target));

/** @type {import("./container-kind.mjs").EnginePlace} */
export const remoteEnginePlace = {
	async check(target, options) {
		return (await import("./remote-engine-check.mjs")).checkRemoteEngine(own(target), options);
	},
	async driver(target, context) {
		return (await import("./driver-remote-engine.mjs")).remoteEngineDriver(own(target), context);
	},
	// Its workspace in the station.
	async removeWork(target, context) {
		return (await import("./remote-engine-work.mjs")).removeStationWork(own(target), context);
	},
	// The station goes (no run is there: remove refuses while rows run or wait); its volume, with the rows'
	// workspaces and sessions, stays the user's, as an ssh host's dir does.
	forget(target, { storeDir }) {
		const remote = own(target);
		spawnSync(remote.engine, [...remoteEngineArgs(remote), "rm", "-f", stationName(storeDir, target.name)], {
			stdio: "ignore",
			timeout: 60_000,
			env: engineEnv(),
		});
	},
	async reconcile() {
		return { removed: [] };
	},
};
