// An ssh host as a kind of target (kind.mjs): a run's runner runs there against a store under `dir`,
// reached with the system ssh over one multiplexed connection. Its fields, words, check, driver and
// what `targets remove` leaves: the driver and the check load on first use.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { invalid, plain } from "../kind.mjs";
import { parseSshHost, sshOf, sshOptions } from "./ssh-transport.mjs";

/** @typedef {import("./ssh-transport.mjs").SshTargetConfig} SshTarget */

/** @type {import("../kind.mjs").TargetKind} */
export const sshKind = {
	kind: "ssh",
	what: "ssh",
	fields: {
		/** What ssh accepts: an alias, [user@]host, ssh://[user@]host[:port]. */
		host: {
			type: "string",
			required: true,
			flag: "--ssh",
			value: "<host>",
			selects: true,
			input: (value) => {
				try {
					parseSshHost(String(value));
				} catch (error) {
					throw invalid(`--ssh: ${error instanceof Error ? error.message : String(error)}`);
				}
				return value;
			},
		},
		/** ssh -F <file>, made absolute: the link runs elsewhere than the command. */
		sshConfig: {
			type: "string",
			flag: "--ssh-config",
			value: "<file>",
			input: (value) => {
				if (typeof value !== "string" || !existsSync(value)) throw invalid(`--ssh-config: no such file: ${String(value)}`);
				return resolve(value);
			},
		},
		/** The target's dir on the host; relative: to the login's home. */
		dir: { type: "string", required: true, flag: "--dir", value: "<remote dir>", default: ".agent-board", input: plain("--dir") },
		/** The pi command on the host (default: pi). */
		pi: {
			type: "words",
			flag: "--pi",
			value: "<command>",
			check: (value) => (Array.isArray(value) && value.length > 0 && value.every((word) => typeof word === "string" && word) ? undefined : "must be a non-empty list of words"),
			input: (value) => String(plain("--pi")(value)).trim().split(/\s+/),
		},
	},
	checkArgs: "--install",
	describe: (config) => `ssh ${String(config.host)} (dir ${String(config.dir)})`,
	async check(target, options) {
		return (await import("./ssh-check.mjs")).checkSsh(/** @type {SshTarget} */ (target), options);
	},
	async driver(target, context) {
		return (await import("./driver-ssh.mjs")).sshDriver(/** @type {SshTarget} */ (target), context);
	},
	async removeWork(target, context) {
		return (await import("./ssh-work.mjs")).removeSshWork(/** @type {SshTarget} */ (target), context);
	},
	// The shared connection goes; the host's dir (mirrors, workspaces, sessions) stays the user's.
	forget(target, context) {
		const ssh = sshOf(/** @type {SshTarget} */ (target), context.storeDir);
		spawnSync("ssh", [...sshOptions(ssh, { master: "no" }), "-O", "exit", parseSshHost(ssh.host).destination], { stdio: "ignore", timeout: 10_000 });
	},
};
