// A row's workspace in a remote engine's station goes with its local worktree: far/work-remove.mjs runs
// in the station over `exec -i` stdin. When that cannot be done the local worktree still goes, and the
// sentence says where the station's copy stays and why.
import { STATION_DIR } from "./engine-remote.mjs";
import { runInStation, stationOf } from "./engine-station.mjs";

/**
 * @param {import("./engine-station.mjs").RemoteTarget} target @param {{ storeDir: string, rowId: string }} context
 * @returns {Promise<{ ok: boolean, text: string }>}
 */
export async function removeStationWork(target, { storeDir, rowId }) {
	const station = stationOf(target, storeDir, "");
	try {
		// Only whether it was there is taken from the station's answer (untrusted); the path is ours.
		const done = /** @type {{ removed?: unknown }} */ (
			await runInStation(target, station.name, "work-remove.mjs", "removeWork", [STATION_DIR, rowId])
		);
		return {
			ok: true,
			text:
				done?.removed === true
					? `removed its workspace in ${station.name} too (${STATION_DIR}/work/${rowId})`
					: `${target.name} had no workspace of it left`,
		};
	} catch (error) {
		return {
			ok: false,
			text: `its workspace on ${target.name} stays at ${station.name}:${STATION_DIR}/work/${rowId}: ${error instanceof Error ? error.message : String(error)}`,
		};
	}
}
