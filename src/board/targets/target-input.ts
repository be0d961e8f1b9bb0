/**
 * A target as `targets add` (or a tool) describes it, checked and completed into the config entry:
 * the ssh host must be something ssh accepts, names of forwarded variables must be names, limits
 * whole numbers. Nothing here reaches the target: `targets check` does.
 */
import { existsSync } from "node:fs";
import { parseSshHost } from "../../../runner/kinds/ssh/ssh-transport.mjs";
import { CONTAINER_ENGINES } from "../../../runner/life/vocabulary.mjs";
import { BoardError } from "../engine/errors.ts";
import type { ContainerTargetConfig, SshTargetConfig, TargetConfig } from "../engine/types.ts";

/** Where an ssh target keeps its files on the host, relative to the login's home. */
export const DEFAULT_REMOTE_DIR = ".agent-board";
export const DEFAULT_TARGET_MAX = 4;

export type TargetInput =
	| { kind: "ssh"; host: string; sshConfig?: string; dir?: string; pi?: string; max?: number; env?: string[] }
	| { kind: "container"; engine: string; image: string; engineHost?: string; network?: string; max?: number; env?: string[]; cpus?: number; memory?: string };

const invalid = (message: string) => new BoardError("invalid", message);

function checkMax(max: number | undefined): number {
	if (max === undefined) return DEFAULT_TARGET_MAX;
	if (!Number.isInteger(max) || max < 1) throw invalid(`--max must be a whole number >= 1 (got ${JSON.stringify(max)})`);
	return max;
}

function checkEnv(env: string[] | undefined): string[] {
	for (const name of env ?? []) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw invalid(`--env takes a variable's name, not its value (got ${JSON.stringify(name)})`);
	return [...new Set(env ?? [])];
}

/** No control characters in anything that ends up in a command line or a path. */
function plain(value: string, what: string): string {
	if (!value || /[\x00-\x1f\x7f]/.test(value)) throw invalid(`${what} must be non-empty, without control characters`);
	return value;
}

function sshTarget(input: Extract<TargetInput, { kind: "ssh" }>): SshTargetConfig {
	try {
		parseSshHost(input.host);
	} catch (error) {
		throw invalid(`--ssh: ${error instanceof Error ? error.message : String(error)}`);
	}
	if (input.sshConfig !== undefined && !existsSync(input.sshConfig)) throw invalid(`--ssh-config: no such file: ${input.sshConfig}`);
	const dir = plain(input.dir ?? DEFAULT_REMOTE_DIR, "--dir");
	const pi = input.pi === undefined ? undefined : plain(input.pi, "--pi").trim().split(/\s+/);
	return {
		kind: "ssh",
		host: input.host,
		...(input.sshConfig !== undefined ? { sshConfig: input.sshConfig } : {}),
		dir,
		...(pi ? { pi } : {}),
		max: checkMax(input.max),
		env: checkEnv(input.env),
	};
}

function containerTarget(input: Extract<TargetInput, { kind: "container" }>): ContainerTargetConfig {
	const engine = CONTAINER_ENGINES.find((known) => known === input.engine);
	if (!engine) throw invalid(`--container takes ${CONTAINER_ENGINES.join(" or ")} (got ${JSON.stringify(input.engine)})`);
	if (input.engineHost !== undefined) throw invalid("--engine-host is not supported yet: a remote engine would need this board's run dirs on its machine");
	if (input.cpus !== undefined && !(Number.isFinite(input.cpus) && input.cpus > 0)) throw invalid(`--cpus must be a number > 0 (got ${JSON.stringify(input.cpus)})`);
	if (input.memory !== undefined && !/^\d+(\.\d+)?[bkmg]?$/i.test(input.memory)) throw invalid(`--memory must be a size like 2g or 512m (got ${JSON.stringify(input.memory)})`);
	return {
		kind: "container",
		engine,
		image: plain(input.image, "--image"),
		...(input.network !== undefined ? { network: plain(input.network, "--network") } : {}),
		max: checkMax(input.max),
		env: checkEnv(input.env),
		...(input.cpus !== undefined ? { cpus: input.cpus } : {}),
		...(input.memory !== undefined ? { memory: input.memory } : {}),
	};
}

export function targetConfigFrom(input: TargetInput): TargetConfig {
	if (input.kind === "ssh") return sshTarget(input);
	if (input.kind === "container") return containerTarget(input);
	throw invalid("a target is --ssh <host> or --container docker|podman");
}
