// `targets check` for an ssh host: reachable without a prompt, then what the host has (host-check.mjs
// sent over ssh, so a missing or old node, pi or git is named), and with --install our worker-side
// files copied there.
import { checkItems } from "../../far/host-check.mjs";
import { FarError } from "../../link/far-client.mjs";
import { checkOverSsh } from "./ssh-far.mjs";
import { packageVersion } from "../../far/package-files.mjs";
import { installOverSsh } from "./pkg-install.mjs";
import { sshOf } from "./ssh-transport.mjs";

/** @typedef {import("../kind.mjs").CheckItem} CheckItem */

/** Why ssh could not get in, and what to do about it. @param {unknown} error @param {string} host @returns {CheckItem} */
function reachItem(error, host) {
	const kind = error instanceof FarError ? error.kind : "remote";
	const detail = error instanceof Error ? error.message : String(error);
	/** @type {Record<string, string>} */
	const fixes = {
		unreachable: `check the host name, that sshd runs there and that this machine can reach it (ssh ${host})`,
		auth: `make key login work without a prompt: ssh-copy-id ${host}, or load the key into your ssh agent (the board never types a password)`,
		"host-key-changed": `if ${host} was reinstalled, drop the old key (ssh-keygen -R <host>) and connect once with ssh to accept the new one; otherwise someone may be in between`,
		"host-key-unknown": `connect once with ssh ${host} to check and accept its host key`,
	};
	return {
		name: "reachable",
		ok: false,
		detail,
		fix: fixes[kind] ?? `run ssh ${host} node -v yourself to see what fails`,
	};
}

/**
 * @param {import("./ssh-transport.mjs").SshTargetConfig} target @param {Omit<import("../kind.mjs").CheckOptions, "agentDir">} options
 * @returns {Promise<CheckItem[]>}
 */
export async function checkSsh(target, options) {
	const { progress } = options;
	const ssh = sshOf(target, options.storeDir);
	const pkgVersion = packageVersion();
	let report;
	progress?.checking(`ssh ${target.host}, then its node, pi and model, git, dir and disk`);
	try {
		// The --env values go in the program on stdin (a run's do too), never on a command line.
		report = await checkOverSsh(ssh, target.dir, {
			...(target.pi ? { pi: target.pi } : {}),
			pkgVersion,
			env: options.env ?? {},
		});
	} catch (error) {
		const item = reachItem(error, target.host);
		progress?.item(item);
		return [item];
	}
	/** @type {CheckItem[]} */
	const items = [
		{ name: "reachable", ok: true, detail: `ssh ${target.host} logs in without a prompt` },
		...checkItems(report, { where: target.host, target: target.name }),
	];
	const installing = options.install && !report.pkg.present && report.dir.ok;
	for (const item of installing ? items.filter((i) => i.name !== "board files") : items) progress?.item(item);
	if (installing) {
		const at = items.findIndex((item) => item.name === "board files");
		progress?.checking(`the board's files: installing version ${pkgVersion}`);
		try {
			const done = await installOverSsh(ssh, target.dir);
			items[at] = { name: "board files", ok: true, detail: `version ${done.version} ${done.outcome}` };
		} catch (error) {
			items[at] = {
				name: "board files",
				ok: false,
				detail: `install failed: ${error instanceof Error ? error.message : String(error)}`,
				fix: `free space in ${report.dir.path}, or check that it is writable`,
			};
		}
		const installed = items[at];
		if (installed) progress?.item(installed);
	}
	return items;
}
