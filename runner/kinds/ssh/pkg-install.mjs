// `targets check --install` and a link's first launch: our worker-side files onto an ssh host at
// <dir>/pkg/<version>/ (kinds/pkg-install.mjs: the steps every far side shares), the files as one tar
// stream through ssh stdin, the far steps as programs over ssh stdin (ssh-far.mjs).
import { spawn } from "node:child_process";
import { PACKAGE_ROOT, packageVersion } from "../../far/package-files.mjs";
import { installPackage } from "../pkg-install.mjs";
import { runFarProgram } from "./ssh-far.mjs";
import { sshArgv, sshEnv, sshFailure } from "./ssh-transport.mjs";

/**
 * A tar of `files` under `root` unpacked at `dest` on the host (made private first).
 * @param {import("./ssh-transport.mjs").SshTarget} target @param {string} root @param {string[]} files @param {string} dest
 * @returns {Promise<void>}
 */
function copyOverSsh(target, root, files, dest) {
	return new Promise((resolvePromise, reject) => {
		const tar = spawn("tar", ["-cf", "-", "-C", root, "--", ...files], { stdio: ["ignore", "pipe", "pipe"] });
		// The path is an argument of sh, never part of its script.
		const unpack = ["sh", "-c", 'umask 077 && mkdir -p "$1" && tar -xf - -C "$1"', "sh", dest];
		const ssh = spawn("ssh", sshArgv(target, unpack), { stdio: ["pipe", "pipe", "pipe"], env: sshEnv() });
		let stderr = "";
		let tarError = "";
		tar.stdout.pipe(ssh.stdin);
		ssh.stdin.on("error", () => undefined);
		tar.stderr.setEncoding("utf8").on("data", (/** @type {string} */ c) => (tarError += c));
		ssh.stdout.resume();
		ssh.stderr.setEncoding("utf8").on("data", (/** @type {string} */ c) => (stderr = (stderr + c).slice(-8000)));
		tar.on("error", (error) => reject(new Error(`tar: ${error.message}`)));
		ssh.on("error", (error) => reject(new Error(`ssh: ${error.message}`)));
		ssh.on("close", (code) => {
			const failure = sshFailure(stderr, code);
			if (failure) return reject(Object.assign(new Error(failure.reason), { kind: failure.kind }));
			if (tarError.trim()) return reject(new Error(`tar: ${tarError.trim()}`));
			if (code === 0) return resolvePromise();
			reject(new Error(`copy into ${dest} failed (exit ${code}): ${stderr.trim().split("\n").pop() ?? ""}`));
		});
	});
}

/**
 * Copies the package to an ssh host. Resolves with { version, outcome: "installed" | "present" }.
 * @param {import("./ssh-transport.mjs").SshTarget} target @param {string} dir absolute dir on the host
 * @param {{ root?: string }} [options]
 */
export async function installOverSsh(target, dir, options = {}) {
	const root = options.root ?? PACKAGE_ROOT;
	const version = packageVersion(root);
	const outcome = await installPackage(
		{
			program: (file, fn, args) => runFarProgram(target, file, fn, args),
			copyIn: (from, files, dest) => copyOverSsh(target, from, files, dest),
		},
		{ dir, version, root },
	);
	return { version, outcome };
}
