// host-agent.mjs on an ssh host: the transport (`node <dir>/pkg/<version>/runner/far/host-agent.mjs
// <verb> <args>` over the target's master), the host's repository mirror as a git remote over the same
// connection, and self-contained far programs sent over ssh stdin (host-check.mjs for `targets check` before our
// files are there, work-remove.mjs when a row's worktree goes).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { FarError, HOST_AGENT } from "../../link/far-client.mjs";
import { gitRemote, shellQuote, sshArgv, sshEnv, sshFailure } from "./ssh-transport.mjs";

/** Where host-agent.mjs is in the host's copy of our files. @param {{ dir: string, pkgVersion: string }} target */
const agentPath = (target) => `${target.dir}/pkg/${target.pkgVersion}/runner/far/host-agent.mjs`;

/**
 * host-agent on an ssh host: `node <dir>/pkg/<version>/runner/far/host-agent.mjs <verb> <args>`.
 * @param {import("./ssh-transport.mjs").SshTarget & { dir: string, pkgVersion: string }} target
 * @returns {import("../../link/far-client.mjs").FarTransport}
 */
export function sshTransport(target) {
	const agent = agentPath(target);
	return {
		name: target.host,
		spawn: (verb, args) =>
			spawn("ssh", sshArgv(target, ["node", agent, verb, ...args]), {
				stdio: ["pipe", "pipe", "pipe"],
				env: sshEnv(),
			}),
		failure: sshFailure,
	};
}

/** A relative dir is the login's home's: "~/<dir>" in git's ssh URLs. @param {string} dir @param {string} repoKey */
export const farMirror = (dir, repoKey) => join(dir.startsWith("/") ? dir : `~/${dir}`, "repos", `${repoKey}.git`);

/**
 * The row's repository mirror on an ssh host as a git remote, over the target's connection; the push
 * creates the mirror when missing (host-agent receive-pack).
 * @param {import("./ssh-transport.mjs").SshTarget & { dir: string, pkgVersion: string }} target @param {string} repoKey
 * @returns {import("../../link/git-travel.mjs").GitRemote}
 */
export function sshMirrorRemote(target, repoKey) {
	const agent = agentPath(target);
	return {
		...gitRemote(target, farMirror(target.dir, repoKey)),
		receivePack: ["node", agent, "receive-pack"].map(shellQuote).join(" "),
	};
}

/**
 * Runs `<fn>(...args)` of a self-contained runner/far/ file (node:* imports only) on the host: its source
 * and the call go to the host's node over ssh stdin, so it needs no version of our files there (or
 * any). The arguments travel in the program, never on a command line. Resolves with what it returned.
 * @param {import("./ssh-transport.mjs").SshTarget} target @param {string} file @param {string} fn @param {unknown[]} args
 * @returns {Promise<unknown>}
 */
export function runFarProgram(target, file, fn, args) {
	const source = readFileSync(join(dirname(HOST_AGENT), file), "utf8");
	const program = `${source}\nprocess.stdout.write(JSON.stringify(await ${fn}(...${JSON.stringify(args)})));\n`;
	return new Promise((resolvePromise, reject) => {
		const child = spawn("ssh", sshArgv(target, ["node", "--input-type=module", "-"]), {
			stdio: ["pipe", "pipe", "pipe"],
			env: sshEnv(),
		});
		let out = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (/** @type {string} */ c) => (out += c));
		child.stderr.setEncoding("utf8").on("data", (/** @type {string} */ c) => (stderr = (stderr + c).slice(-8000)));
		child.stdin.on("error", () => undefined);
		child.stdin.end(program);
		child.on("error", (error) => reject(new FarError(error.message, "unreachable")));
		child.on("close", (code) => {
			const failure = sshFailure(stderr, code);
			if (failure) return reject(new FarError(failure.reason, failure.kind));
			const said =
				stderr
					.trim()
					.split("\n")
					.find((line) => /^\w*Error\b/.test(line.trim()))
					?.trim() ??
				stderr.trim().split("\n").pop() ??
				"";
			if (code === 127)
				return reject(new FarError(`node not found on the host's non-interactive PATH (${said})`, "remote"));
			try {
				if (code !== 0) throw new Error("failed");
				resolvePromise(JSON.parse(out));
			} catch {
				reject(new FarError(`${file} failed on the host (exit ${code}): ${said || out.slice(0, 200)}`, "remote"));
			}
		});
	});
}

/**
 * `targets check` before our files are on the host: host-check.mjs itself goes over ssh stdin to the
 * host's node, so a missing or too-old node, pi or git is reported, not just "host-agent not found".
 * @param {import("./ssh-transport.mjs").SshTarget} target @param {string} dir
 * @param {{ pi?: string[], pkgVersion?: string, env?: Record<string, string> }} config
 * @returns {Promise<ReturnType<typeof import("../../far/host-check.mjs").checkHost>>}
 */
export async function checkOverSsh(target, dir, config) {
	return /** @type {ReturnType<typeof import("../../far/host-check.mjs").checkHost>} */ (
		await runFarProgram(target, "host-check.mjs", "checkHost", [dir, config])
	);
}
