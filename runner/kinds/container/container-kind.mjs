// A container engine as a kind of target (kind.mjs): one container per run, made by the user's docker
// or podman CLI on this machine. Its fields, words, check, driver and the reconcile that removes
// containers no run owns; the engine code loads on first use.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { targetPaths } from "../../store/store-layout.mjs";
import { invalid, plain } from "../kind.mjs";
import { CONTAINER_ENGINES } from "./container-argv.mjs";
import { imageError, networkError } from "./container-input.mjs";

/** @typedef {import("./container-argv.mjs").ContainerTarget} ContainerTarget */

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
				if (!CONTAINER_ENGINES.some((engine) => engine === value)) throw invalid(`--container takes ${CONTAINER_ENGINES.join(" or ")} (got ${JSON.stringify(value)})`);
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
		/** The engine's own remote flag (docker -H, podman --url): refused until the run's dirs can travel there. */
		engineHost: {
			type: "string",
			flag: "--engine-host",
			value: "<url>",
			hidden: true,
			input: () => {
				throw invalid("--engine-host is not supported yet: a remote engine would need this board's run dirs on its machine");
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
				if (typeof value !== "number" || !(Number.isFinite(value) && value > 0)) throw invalid(`--cpus must be a number > 0 (got ${JSON.stringify(value)})`);
				return value;
			},
		},
		memory: {
			type: "string",
			flag: "--memory",
			value: "<size>",
			input: (value) => {
				if (typeof value !== "string" || !/^\d+(\.\d+)?[bkmg]?$/i.test(value)) throw invalid(`--memory must be a size like 2g or 512m (got ${JSON.stringify(value)})`);
				return value;
			},
		},
	},
	describe: (config) => `${String(config.engine)} image ${String(config.image)}${config.network ? ` (network ${String(config.network)})` : ""}`,
	async check(target, options) {
		return (await import("./container-transport.mjs")).check(/** @type {ContainerTarget} */ (target), options);
	},
	async driver(target) {
		return (await import("./driver-container.mjs")).containerDriver(/** @type {ContainerTarget} */ (target));
	},
	// The row's clone on this machine; its .git is the agent's, so no git runs in it.
	async removeWork(target, { storeDir, rowId }) {
		const { work } = targetPaths(join(storeDir, "targets", target.name), rowId);
		try {
			rmSync(work, { recursive: true, force: true });
			return { ok: true, text: `removed its container workspace too (${work})` };
		} catch (error) {
			return { ok: false, text: `its container workspace stays at ${work}: ${error instanceof Error ? error.message : String(error)}` };
		}
	},
	async reconcile(storeDir, target, runIsLive) {
		return (await import("./container-transport.mjs")).reconcile(storeDir, /** @type {ContainerTarget} */ (target), runIsLive);
	},
};
