// A third kind of target, for tests and benches only: the far side is a directory on this machine,
// reached by running host-agent.mjs as a local child (the same verbs ssh carries). It is one object
// (runner/kinds/kind.mjs) in this one folder; register.mjs registers it (in-process, or in a link
// process through NODE_OPTIONS=--import), and the link, the queue, the board and the subcommands
// drive it unchanged.
import { spawn } from "node:child_process";
import { accessSync, constants, mkdirSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { invalid, plain } from "../../runner/kinds/kind.mjs";
import { agentDriver } from "../../runner/link/agent-driver.mjs";
import { HOST_AGENT } from "../../runner/link/far-client.mjs";
import { RUN_TAG } from "../../runner/store/proc.mjs";

/** host-agent as a local child, without the run's tag (what it starts is tagged by the far runner). */
export function localTransport() {
	const env = { ...process.env };
	delete env[RUN_TAG];
	return {
		name: "local",
		/** @param {string} verb @param {string[]} args */
		spawn: (verb, args) =>
			spawn(process.execPath, [HOST_AGENT, verb, ...args], { stdio: ["pipe", "pipe", "pipe"], env }),
		failure: () => undefined,
	};
}

/** The far side's mirror of a repository, created by host-agent's receive-pack on the first push. @param {string} dir @param {string} repoKey */
export const localMirror = (dir, repoKey) => ({
	url: join(dir, "repos", `${repoKey}.git`),
	receivePack: `'${process.execPath}' '${HOST_AGENT}' receive-pack`,
});

/** @type {import("../../runner/kinds/kind.mjs").TargetKind} */
export const fakeKind = {
	kind: "fake",
	what: "fake",
	fields: {
		dir: {
			type: "string",
			required: true,
			flag: "--fake",
			value: "<dir>",
			selects: true,
			input: (value) => {
				const dir = plain("--fake")(value);
				if (!isAbsolute(String(dir)))
					throw invalid(`--fake takes an absolute directory (got ${JSON.stringify(value)})`);
				return dir;
			},
		},
		pi: { type: "words", flag: "--pi", value: "<command>", input: (value) => String(value).trim().split(/\s+/) },
	},
	describe: (config) => `a directory here (${String(config.dir)})`,
	async check(target) {
		const dir = String(target.dir);
		try {
			mkdirSync(dir, { recursive: true, mode: 0o700 });
			accessSync(dir, constants.W_OK);
			return [{ name: "dir", ok: true, detail: `${dir} is writable` }];
		} catch (error) {
			return [
				{
					name: "dir",
					ok: false,
					detail: `${dir}: ${error instanceof Error ? error.message : String(error)}`,
					fix: "choose another --fake dir",
				},
			];
		}
	},
	async driver(target, context) {
		const dir = String(target.dir);
		return agentDriver(
			{
				name: target.name,
				dir,
				...(Array.isArray(target.pi) ? { pi: target.pi.map(String) } : {}),
				transport: localTransport(),
				remote: (key) => localMirror(dir, key),
			},
			context.hooks,
		);
	},
};
