import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { invalid, plain } from "../kind.mjs";
import { CONTAINER_ENGINES } from "./container-argv.mjs";
import { imageError, networkError } from "./container-input.mjs";
import { engineHostError } from "./engine-remote.mjs";
import { localEnginePlace } from "./local-engine-place.mjs";
import { remoteEnginePlace } from "./remote-engine-place.mjs";

/**
 * Where a container target's runs go: this machine's engine or a remote engine's station. One kind (the
 * fields and words are the same), two places; the target's engineHost picks one, once.
 * @typedef {Required<Pick<import("../kind.mjs").TargetKind, "check" | "driver" | "removeWork" | "forget" | "reconcile">>} EnginePlace
 */

/** @param {import("../kind.mjs").TargetSnapshot} target @returns {EnginePlace} */
const placeOf = (target) => (target.engineHost ? remoteEnginePlace : localEnginePlace);

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
	check: (target, options) => placeOf(target).check(target, options),
	driver: (target, context) => placeOf(target).driver(target, context),
	removeWork: (target, context) => placeOf(target).removeWork(target, context),
	forget: (target, context) => placeOf(target).forget(target, context),
	reconcile: (storeDir, target, runIsLive) => placeOf(target).reconcile(storeDir, target, runIsLive),
};
