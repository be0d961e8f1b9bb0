// A container engine as a kind of target (kind.mjs): one container per run, made by the user's docker
// or podman CLI on this machine. Its fields, words, check, driver and the reconcile that removes
// containers no run owns; the engine code loads on first use.
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { targetPaths } from "../../store/store-layout.mjs";
import { invalid, plain } from "../kind.mjs";
import { CONTAINER_ENGINES } from "./container-argv.mjs";
import { imageError, networkError } from "./container-input.mjs";
import { engineEnv } from "./container-engine.mjs";
import { engineHostError, remoteEngineArgs, stationName } from "./engine-remote.mjs";

/** @typedef {import("./container-argv.mjs").ContainerTarget} ContainerTarget */
/** @typedef {import("./engine-station.mjs").RemoteTarget} RemoteTarget */

/** @type {import("../kind.mjs").TargetKind} */
export const containerKind = {
	kind: "container",
	what: "container",
	fields: {
		engine: {
			type: "string",
			required: true,
			flag: "--container",
			value: "docker|podman",
			selects: true,
			oneOf: CONTAINER_ENGINES,
			input: (value) => {
				if (!CONTAINER_ENGINES.some((engine) => engine === value))
					throw invalid(`--container takes ${CONTAINER_ENGINES.join(" or ")} (got ${JSON.stringify(value)})`);
				return value;
			},
		},
		image: {
			type: "string",
			required: true,
			flag: "--image",
			value: "<image>",
			check: (value) => imageError(value),
			input: (value) => {
				const error = imageError(value);
				if (error) throw invalid(`--image ${JSON.stringify(value)} ${error}`);
				return value;
			},
		},
		/**
		 * An engine on another machine (docker -H / --context, podman --url / --connection): runs go to one
		 * station container there, code and files by the engine's own exec and cp (engine-remote.mjs).
		 */
		engineHost: {
			type: "string",
			flag: "--engine-host",
			value: "<url|name>",
			check: (value) => engineHostError(value),
			input: (value) => {
				const error = engineHostError(plain("--engine-host")(value));
				if (error) throw invalid(`--engine-host ${JSON.stringify(value)} ${error}`);
				return value;
			},
		},
		/** podman's --identity for an ssh:// engine host (docker's ssh is the system ssh: its config names keys). */
		engineIdentity: {
			type: "string",
			flag: "--engine-identity",
			value: "<key file>",
			input: (value, input) => {
				if (input.engineHost === undefined) throw invalid("--engine-identity goes with --engine-host");
				if (input.engine !== "podman")
					throw invalid(
						"--engine-identity is podman's (--identity); docker's ssh takes its key from your ssh config or agent",
					);
				if (typeof value !== "string" || !existsSync(value))
					throw invalid(`--engine-identity: no such file: ${String(value)}`);
				return resolve(value);
			},
		},
		network: {
			type: "string",
			flag: "--network",
			value: "<mode>",
			check: (value) => networkError(value),
			input: (value) => {
				const error = networkError(plain("--network")(value));
				if (error) throw invalid(`--network ${JSON.stringify(value)} ${error}`);
				return value;
			},
		},
		cpus: {
			type: "number",
			flag: "--cpus",
			value: "<n>",
			check: (value) => (typeof value === "number" && value > 0 ? undefined : "must be a number > 0"),
			input: (value) => {
				if (typeof value !== "number" || !(Number.isFinite(value) && value > 0))
					throw invalid(`--cpus must be a number > 0 (got ${JSON.stringify(value)})`);
				return value;
			},
		},
		memory: {
			type: "string",
			flag: "--memory",
			value: "<size>",
			input: (value) => {
				if (typeof value !== "string" || !/^\d+(\.\d+)?[bkmg]?$/i.test(value))
					throw invalid(`--memory must be a size like 2g or 512m (got ${JSON.stringify(value)})`);
				return value;
			},
		},
	},
	describe: (config) =>
		`${String(config.engine)}${config.engineHost ? ` on ${String(config.engineHost)}` : ""} image ${String(config.image)}${config.network ? ` (network ${String(config.network)})` : ""}`,
	async check(target, options) {
		if (target.engineHost)
			return (await import("./remote-engine-check.mjs")).checkRemoteEngine(
				/** @type {RemoteTarget} */ (/** @type {unknown} */ (target)),
				options,
			);
		return (await import("./container-transport.mjs")).check(/** @type {ContainerTarget} */ (target), options);
	},
	async driver(target, context) {
		if (target.engineHost)
			return (await import("./driver-remote-engine.mjs")).remoteEngineDriver(
				/** @type {RemoteTarget} */ (/** @type {unknown} */ (target)),
				context,
			);
		return (await import("./driver-container.mjs")).containerDriver(/** @type {ContainerTarget} */ (target));
	},
	// The row's clone on this machine (its .git is the agent's, so no git runs in it), or its workspace in a remote engine's station.
	async removeWork(target, { storeDir, rowId }) {
		if (target.engineHost)
			return (await import("./remote-engine-work.mjs")).removeStationWork(
				/** @type {RemoteTarget} */ (/** @type {unknown} */ (target)),
				{ storeDir, rowId },
			);
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
	// A remote engine's station goes (no run is there: remove refuses while rows run or wait); its
	// volume, with the rows' workspaces and sessions, stays the user's, as an ssh host's dir does.
	forget(target, { storeDir }) {
		if (!target.engineHost) return;
		const remote = /** @type {RemoteTarget} */ (/** @type {unknown} */ (target));
		spawnSync(remote.engine, [...remoteEngineArgs(remote), "rm", "-f", stationName(storeDir, target.name)], {
			stdio: "ignore",
			timeout: 60_000,
			env: engineEnv(),
		});
	},
	async reconcile(storeDir, target, runIsLive) {
		// A remote engine's runs are processes of its station (stopped by host-agent), not containers of their own.
		if (target.engineHost) return { removed: [] };
		return (await import("./container-transport.mjs")).reconcile(
			storeDir,
			/** @type {ContainerTarget} */ (target),
			runIsLive,
		);
	},
};
