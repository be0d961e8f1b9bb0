// `targets check --install`: our worker-side files (runner/, src/, skills/, package.json) copied to
// <dir>/pkg/<version>/ on an ssh host as one tar stream through ssh stdin; nothing is downloaded there.
// <version> is the package version plus a hash of exactly those files, so an edited checkout is a new
// version and two boards of different versions can share a host.
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { writeJsonAtomic } from "../../store/fs-util.mjs";
import { PACKAGE_ROOT } from "../../far/far-run.mjs";
import { shellQuote, sshArgv, sshEnv, sshFailure } from "./ssh-transport.mjs";

export const SHIPPED = ["package.json", "runner", "src", "skills"];

/** Regular files to ship, relative to the package root, sorted. @param {string} [root] */
export function shippedFiles(root = PACKAGE_ROOT) {
	/** @type {string[]} */
	const files = [];
	/** @param {string} path */
	const walk = (path) => {
		const stat = statSync(path);
		if (stat.isDirectory()) {
			for (const name of readdirSync(path).sort()) if (!name.startsWith(".") && name !== "node_modules") walk(join(path, name));
		} else if (stat.isFile()) files.push(relative(root, path));
	};
	for (const top of SHIPPED) walk(join(root, top));
	return files.sort();
}

/**
 * packageVersion, remembered in `cacheFile` (in the private store) under a fingerprint of the shipped
 * files' sizes, mtimes and modes: a link starts per run, and hashing every file costs ~100 ms there.
 * @param {string} cacheFile @param {string} [root]
 */
export function cachedPackageVersion(cacheFile, root = PACKAGE_ROOT) {
	const print = createHash("sha256").update(root);
	for (const file of shippedFiles(root)) {
		const stat = statSync(join(root, file));
		print.update(`${file}\0${stat.size}\0${stat.mtimeMs}\0${stat.mode}\0`);
	}
	const fingerprint = print.digest("hex");
	try {
		const cached = JSON.parse(readFileSync(cacheFile, "utf8"));
		if (cached?.fingerprint === fingerprint && typeof cached.version === "string") return cached.version;
	} catch {
		// Not cached yet.
	}
	const version = packageVersion(root);
	try {
		writeJsonAtomic(cacheFile, { fingerprint, version });
	} catch {
		// Computed again next time.
	}
	return version;
}

/** `<package version>-<12 hex of the shipped files>`. @param {string} [root] */
export function packageVersion(root = PACKAGE_ROOT) {
	const hash = createHash("sha256");
	for (const file of shippedFiles(root)) {
		const bytes = readFileSync(join(root, file));
		hash.update(`${file}\0${statSync(join(root, file)).mode & 0o111 ? "x" : "-"}\0${bytes.length}\0`);
		hash.update(bytes);
	}
	const version = String(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version);
	return `${version}-${hash.digest("hex").slice(0, 12)}`;
}

/**
 * The remote shell script: unpack into a private temp dir beside the target, mark it complete, then
 * move it into place; an existing complete install of the same version is kept as is.
 * @param {string} dir @param {string} version
 */
export function installScript(dir, version) {
	const pkg = shellQuote(`${dir}/pkg`);
	const final = shellQuote(`${dir}/pkg/${version}`);
	const temp = shellQuote(`${dir}/pkg/.incoming-${version}-${randomBytes(4).toString("hex")}`);
	return [
		"set -e",
		"umask 077",
		`mkdir -p ${pkg}`,
		`if [ -e ${final}/.complete ]; then cat >/dev/null; echo present; exit 0; fi`,
		`t=${temp}`,
		`rm -rf "$t"; mkdir "$t"`,
		`tar -xf - -C "$t"`,
		`touch "$t/.complete"`,
		`rm -rf ${final}`,
		`mv "$t" ${final}`,
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
		const ssh = spawn("ssh", sshArgv(target, ["sh", "-c", installScript(dir, version)]), { stdio: ["pipe", "pipe", "pipe"], env: sshEnv() });
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
			if (code === 0 && (outcome === "installed" || outcome === "present")) return resolvePromise({ version, outcome });
			reject(new Error(`install into ${dir}/pkg/${version} failed (exit ${code}): ${stderr.trim().split("\n").pop() ?? ""}`));
		});
	});
}
