// The link's driver for a container target on a remote engine (`--engine-host`): the ssh kind's
// host-agent driver (agent-driver.mjs: one channel for every run, code by git, the far side's load)
// with the engine's `exec -i <station>` in place of `ssh host` (engine-station.mjs). Before a launch
// the station runs with our files at this version, and the row's pi home (its provider only) is
// copied in; it goes again when the run ends.
import { join } from "node:path";
import { agentDriver } from "../../link/agent-driver.mjs";
import { cachedPackageVersion } from "../../far/package-files.mjs";
import { deferred } from "./driver-container.mjs";
import { stationGitRemote } from "./engine-remote.mjs";
import {
	execInStation,
	installIntoStation,
	sendPiHome,
	stationOf,
	stationPiHome,
	stationTransport,
} from "./engine-station.mjs";

/** @param {unknown} error */
const failureOf = (error) => ({
	kind: /** @type {{ kind?: string }} */ (error).kind ?? "remote",
	reason: error instanceof Error ? error.message : String(error),
});

/**
 * @param {import("./engine-station.mjs").RemoteTarget} target
 * @param {{ storeDir: string, hooks?: import("../../link/driver.mjs").TargetHooks }} context
 * @returns {import("../../link/driver.mjs").TargetDriver}
 */
export function remoteEngineDriver(target, context) {
	const station = stationOf(
		target,
		context.storeDir,
		cachedPackageVersion(join(context.storeDir, "targets", "pkg-version.json")),
	);
	/** @type {Promise<unknown> | undefined} */
	let ready;
	const install = () => installIntoStation(target, context.storeDir, station);
	const inner = agentDriver(
		{
			name: target.name,
			dir: station.dir,
			transport: stationTransport(target, station),
			remote: (repoKey) =>
				stationGitRemote(target, station.name, station.agent, `${station.dir}/repos/${repoKey}.git`),
			install,
		},
		context.hooks,
	);

	/** The station runs with our files, and the row's pi home is there; once more after a station that went. @param {import("../../link/driver.mjs").LinkRun} run */
	async function prepare(run) {
		for (let attempt = 0; ; attempt++) {
			ready ??= install();
			try {
				await ready;
				return await sendPiHome(target, station, {
					agentDir: run.agentDir,
					rowId: run.rowId,
					model: run.config.model,
				});
			} catch (error) {
				ready = undefined;
				if (attempt > 0 || failureOf(error).kind !== "missing-agent") throw error;
			}
		}
	}

	return {
		launch(run, on) {
			return deferred((attach) => {
				prepare(run).then(
					(home) =>
						attach(
							inner.launch(
								{ ...run, config: { ...run.config, env: { ...run.config.env, PI_CODING_AGENT_DIR: home } } },
								on,
							),
						),
					(error) => on.close({ ended: false, failure: failureOf(error) }),
				);
			});
		},
		follow: (run, from, on) => inner.follow(run, from, on),
		fetchBack: (run) => inner.fetchBack(run),
		stop: (run) => inner.stop(run),
		// The row's credentials stay in the station only while a run of it runs.
		finish(run) {
			execInStation(target, station.name, [
				"node",
				"-e",
				"require('fs').rmSync(process.argv[1], { recursive: true, force: true })",
				stationPiHome(station, run.rowId),
			]).catch(() => undefined);
		},
		close: () => inner.close?.(),
	};
}
