// An ssh host as a kind of target (kind.mjs): a run's runner runs there against a store under `dir`,
// reached with the system ssh over one multiplexed connection. Its fields, words, check, driver and
// what `targets remove` leaves: the driver and the check load on first use.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { posix, resolve } from "node:path";
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
				if (typeof value !== "string" || !existsSync(value))
					throw invalid(`--ssh-config: no such file: ${String(value)}`);
				return resolve(value);
			},
		},
		/**
		 * The target's dir on the host; relative: to the login's home, and inside it (`..` may not leave it);
		 * an absolute one only with --dir-absolute (check --install creates it, as the login user).
		 */
		dir: {
			type: "string",
			required: true,
			flag: "--dir",
			value: "<remote dir>",
			default: ".agent-board",
			input: (value, input) => {
				const dir = String(plain("--dir")(value));
				if (dir.startsWith("/")) {
					if (input.dirAbsolute !== true)
						throw invalid(
							`--dir ${JSON.stringify(dir)} is absolute: give --dir-absolute too to use a directory outside the login's home, or a path relative to it`,
						);
					return posix.normalize(dir);
				}
				const inside = posix.normalize(dir.replace(/^~(\/|$)/, ""));
				if (inside === ".." || inside.startsWith("../"))
					throw invalid(
						`--dir ${JSON.stringify(dir)} leaves the login's home (its ".." go above it): give a path inside it, or an absolute one with --dir-absolute`,
					);
				if (inside === "." || inside === "")
					throw invalid(
						`--dir ${JSON.stringify(dir)} is the login's home itself: give a directory of its own (default .agent-board)`,
					);
				return inside;
			},
		},
		/** --dir may be absolute (outside the login's home); not kept in the config. */
		dirAbsolute: { type: "flag", flag: "--dir-absolute", inputOnly: true },
		/** The pi command on the host (default: pi). */
		pi: {
			type: "words",
			flag: "--pi",
			value: "<command>",
			check: (value) =>
				Array.isArray(value) && value.length > 0 && value.every((word) => typeof word === "string" && word)
					? undefined
					: "must be a non-empty list of words",
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
		spawnSync("ssh", [...sshOptions(ssh, { master: "no" }), "-O", "exit", parseSshHost(ssh.host).destination], {
			stdio: "ignore",
			timeout: 10_000,
		});
	},
};
