// `targets check --install`: our worker-side files (far/package-files.mjs) copied to
// <dir>/pkg/<version>/ on an ssh host as one tar stream through ssh stdin; nothing is downloaded there.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { PACKAGE_ROOT, packageVersion, shippedFiles } from "../../far/package-files.mjs";
import { shellQuote, sshArgv, sshEnv, sshFailure } from "./ssh-transport.mjs";

/**
 * The remote shell script: unpack into a private temp dir beside the target, mark it complete, then
 * move it into place; an existing complete install of the same version is kept as is, one that landed
 * while ours was unpacked included.
 * @param {string} dir @param {string} version
 */
export function installScript(dir, version) {
	const pkg = shellQuote(`${dir}/pkg`);
	const final = shellQuote(`${dir}/pkg/${version}`);
	const name = `.incoming-${version}-${randomBytes(4).toString("hex")}`;
	const temp = shellQuote(`${dir}/pkg/${name}`);
	const inside = shellQuote(`${dir}/pkg/${version}/${name}`);
	return [
		"set -e",
		"umask 077",
		`mkdir -p ${pkg}`,
		`if [ -e ${final}/.complete ]; then cat >/dev/null; echo present; exit 0; fi`,
		`t=${temp}`,
		`rm -rf "$t"; mkdir "$t"`,
		`tar -xf - -C "$t"`,
		`touch "$t/.complete"`,
		// Another install (a second link to this host, a targets check) may have landed while our files
		// came: host-agents start from it, so it stays, and ours goes.
		`if [ -e ${final}/.complete ]; then rm -rf "$t"; echo present; exit 0; fi`,
		`rm -rf ${final}`,
		`mv "$t" ${final}`,
		// One that landed between that look and the move: mv put ours inside it.
		`if [ -e ${inside} ]; then rm -rf ${inside}; echo present; exit 0; fi`,
		"echo installed",
	].join("\n");
}

/**
 * Copies the package to an ssh host. Resolves with { version, outcome: "installed" | "present" }.
 * @param {import("./ssh-transport.mjs").SshTarget} target @param {string} dir absolute dir on the host
 * @param {{ root?: string }} [options]
 */
export function installOverSsh(target, dir, options = {}) {
	const root = options.root ?? PACKAGE_ROOT;
	const version = packageVersion(root);
	const files = shippedFiles(root);
	return new Promise((resolvePromise, reject) => {
		const tar = spawn("tar", ["-cf", "-", "-C", root, "--", ...files], { stdio: ["ignore", "pipe", "pipe"] });
		const ssh = spawn("ssh", sshArgv(target, ["sh", "-c", installScript(dir, version)]), {
			stdio: ["pipe", "pipe", "pipe"],
			env: sshEnv(),
		});
		let out = "";
		let stderr = "";
		let tarError = "";
		tar.stdout.pipe(ssh.stdin);
		ssh.stdin.on("error", () => undefined);
		tar.stderr.setEncoding("utf8").on("data", (/** @type {string} */ c) => (tarError += c));
		ssh.stdout.setEncoding("utf8").on("data", (/** @type {string} */ c) => (out += c));
		ssh.stderr.setEncoding("utf8").on("data", (/** @type {string} */ c) => (stderr = (stderr + c).slice(-8000)));
		tar.on("error", (error) => reject(new Error(`tar: ${error.message}`)));
		ssh.on("error", (error) => reject(new Error(`ssh: ${error.message}`)));
		ssh.on("close", (code) => {
			const failure = sshFailure(stderr, code);
			if (failure) return reject(Object.assign(new Error(failure.reason), { kind: failure.kind }));
			if (tarError.trim()) return reject(new Error(`tar: ${tarError.trim()}`));
			const outcome = out.trim().split("\n").pop();
			if (code === 0 && (outcome === "installed" || outcome === "present"))
				return resolvePromise({ version, outcome });
			reject(
				new Error(
					`install into ${dir}/pkg/${version} failed (exit ${code}): ${stderr.trim().split("\n").pop() ?? ""}`,
				),
			);
		});
	});
}
