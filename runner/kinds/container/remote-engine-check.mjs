// `targets check` for a container target on a remote engine: the engine answers (its own client and
// server versions), the station runs from the image there, what host-check.mjs finds inside it (node,
// pi, git, the dir, the disk; sent over `exec -i` stdin, so it needs none of our files there), and our
// worker-side files at this version (copied in when missing: a remote engine has nothing to mount).
import { checkItems } from "../../far/host-check.mjs";
import { packageVersion } from "../../far/package-files.mjs";
import { buildFix, EngineError, engineRun } from "./container-engine.mjs";
import { remoteEngineArgs } from "./engine-remote.mjs";
import { installIntoStation, runInStation, stationOf } from "./engine-station.mjs";

/** @typedef {import("../kind.mjs").CheckItem} CheckItem */

/** @param {unknown} error */
const words = (error) => (error instanceof Error ? error.message : String(error));

/**
 * @param {import("./engine-station.mjs").RemoteTarget} target @param {Omit<import("../kind.mjs").CheckOptions, "agentDir">} options
 * @returns {Promise<CheckItem[]>}
 */
export async function checkRemoteEngine(target, options) {
	const { progress } = options;
	/** @type {CheckItem[]} */
	const items = [];
	/** @param {CheckItem} item */
	const add = (item) => {
		items.push(item);
		progress?.item(item);
		return item.ok;
	};
	const where = `${target.engine} on ${target.engineHost}`;
	progress?.checking(where);
	try {
		const version = (
			await engineRun(target.engine, [...remoteEngineArgs(target), "version", "--format", "{{.Server.Version}}"], {
				timeoutMs: 60_000,
			})
		).stdout.trim();
		add({ name: "engine", ok: true, detail: `${where}: server ${version}` });
	} catch (error) {
		add({
			name: "engine",
			ok: false,
			detail: words(error),
			fix:
				target.engine === "podman"
					? `make \`podman --remote --url ${target.engineHost} info\` work (its service running there: podman system service; the key: --engine-identity)`
					: `make \`docker -H ${target.engineHost} info\` work (ssh key login without a prompt)`,
		});
		return items;
	}
	const pkgVersion = packageVersion();
	const station = stationOf(target, options.storeDir, pkgVersion);
	progress?.checking(`the station ${station.name} from ${target.image}, and the board's files in it`);
	try {
		const outcome = await installIntoStation(target, options.storeDir, station);
		add({
			name: "station",
			ok: true,
			detail: `${station.name} runs ${target.image}; board files version ${pkgVersion} ${outcome}`,
		});
	} catch (error) {
		const image = error instanceof EngineError && error.code === "image-missing";
		add({
			name: "station",
			ok: false,
			detail: words(error),
			fix: image
				? `put the image on the engine's machine (the board never pulls): ${buildFix(target.engine, target.image)}, run there`
				: `make \`${target.engine} run\` of ${target.image} work on that engine`,
		});
		return items;
	}
	progress?.checking("node, pi, git, the dir and the disk inside the station");
	try {
		const report = /** @type {ReturnType<typeof import("../../far/host-check.mjs").checkHost>} */ (
			await runInStation(target, station.name, "host-check.mjs", "checkHost", [
				station.dir,
				{ pkgVersion, env: options.env ?? {} },
			])
		);
		// The model's configuration goes with each run (the row's provider only), so the station has none of its own.
		for (const item of checkItems({ ...report, model: undefined }, { where: station.name, target: target.name }))
			add(item);
	} catch (error) {
		add({
			name: "inside",
			ok: false,
			detail: words(error),
			fix: `an image with node, pi, bash and git: ${buildFix(target.engine, target.image)}`,
		});
	}
	return items;
}
