// What a target needs, checked where it runs: node >= 22.19, pi 1.6 through the configured command,
// git, a writable dir with free space, and this package's worker-side files at a given version. Only
// node:* imports and plain syntax: before --install this file is sent over ssh stdin to whatever node
// the host has (`node --input-type=module -`), so a too-old node still gets its answer.
import { execFileSync } from "node:child_process";
// A namespace import: a node too old for statfsSync must still load this file and report itself.
import * as fs from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export const MIN_NODE = [22, 19];
export const PI_SERIES = "1.6";
export const MIN_FREE_BYTES = 1024 * 1024 * 1024;

/** @param {string} version "v22.19.0" or "22.19.0" */
export function nodeVersionOk(version) {
	const [major, minor] = version.replace(/^v/, "").split(".").map(Number);
	if (major === undefined || minor === undefined || Number.isNaN(major) || Number.isNaN(minor)) return false;
	const [needMajor = 0, needMinor = 0] = MIN_NODE;
	return major > needMajor || (major === needMajor && minor >= needMinor);
}

/** @param {string} version */
export function piVersionOk(version) {
	return version === PI_SERIES || version.startsWith(`${PI_SERIES}.`);
}

/** @param {string} command @param {string[]} args */
function firstLine(command, args) {
	const out = execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 30000 });
	return out.trim().split("\n").pop()?.trim() ?? "";
}

/** @param {unknown} error */
function why(error) {
	const e = /** @type {{ code?: string, stderr?: unknown, message?: string }} */ (error);
	if (e.code === "ENOENT") return "not found on PATH";
	const stderr = String(e.stderr ?? "").trim().split("\n").pop();
	return stderr || e.message || String(error);
}

/**
 * @param {string} dir the target's --dir (relative to the home directory when not absolute)
 * @param {{ pi?: string[], pkgVersion?: string, minFreeBytes?: number }} [config]
 */
export function checkHost(dir, config = {}) {
	const path = resolve(homedir(), dir);
	const node = { version: process.version, ok: nodeVersionOk(process.version), need: `>= ${MIN_NODE.join(".")}` };
	const piCommand = config.pi && config.pi.length ? config.pi : ["pi"];
	/** @type {{ command: string, ok: boolean, version?: string, error?: string, need: string }} */
	const pi = { command: piCommand.join(" "), ok: false, need: `${PI_SERIES}.x` };
	try {
		pi.version = firstLine(piCommand[0] ?? "pi", [...piCommand.slice(1), "--version"]);
		pi.ok = piVersionOk(pi.version);
	} catch (error) {
		pi.error = why(error);
	}
	/** @type {{ ok: boolean, version?: string, error?: string }} */
	const git = { ok: false };
	try {
		git.version = firstLine("git", ["--version"]).replace(/^git version /, "");
		git.ok = true;
	} catch (error) {
		git.error = why(error);
	}
	/** @type {{ path: string, ok: boolean, error?: string }} */
	const dirState = { path, ok: false };
	try {
		fs.mkdirSync(path, { recursive: true, mode: 0o700 });
		fs.accessSync(path, fs.constants.W_OK);
		const probe = join(path, `.probe-${process.pid}`);
		fs.writeFileSync(probe, "");
		fs.unlinkSync(probe);
		dirState.ok = true;
	} catch (error) {
		dirState.error = why(error);
	}
	/** @type {{ freeBytes?: number, ok: boolean, need: number, error?: string }} */
	const disk = { ok: false, need: config.minFreeBytes ?? MIN_FREE_BYTES };
	try {
		if (typeof fs.statfsSync !== "function") throw new Error(`node ${process.version} cannot read free space`);
		const stat = fs.statfsSync(fs.existsSync(path) ? path : homedir());
		disk.freeBytes = Number(stat.bavail) * Number(stat.bsize);
		disk.ok = disk.freeBytes >= disk.need;
	} catch (error) {
		disk.error = why(error);
	}
	const pkg = { version: config.pkgVersion ?? "", present: !!config.pkgVersion && fs.existsSync(join(path, "pkg", config.pkgVersion, ".complete")) };
	return { ok: node.ok && pi.ok && git.ok && dirState.ok && disk.ok && pkg.present, node, pi, git, dir: dirState, disk, pkg };
}

/** One line per requirement for `targets check`. @typedef {import("../../src/board/engine/types.ts").CheckItem} CheckItem */

/** @param {number} bytes */
function gib(bytes) {
	return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
}

/**
 * @param {ReturnType<typeof checkHost>} report
 * @param {{ where: string, target?: string }} options  `where` names the place in the fixes ("dev", "the image x")
 * @returns {CheckItem[]}
 */
export function checkItems(report, options) {
	const { where } = options;
	const target = options.target ?? "<name>";
	const { node, pi, git, dir, disk, pkg } = report;
	/** @type {CheckItem[]} */
	const items = [
		node.ok
			? { name: "node", ok: true, detail: `node ${node.version}` }
			: { name: "node", ok: false, detail: `node ${node.version} is too old (needs ${node.need})`, fix: `install node >= ${MIN_NODE.join(".")} on ${where} where a non-interactive shell finds it first` },
		pi.ok
			? { name: "pi", ok: true, detail: `pi ${pi.version} (${pi.command})` }
			: { name: "pi", ok: false, detail: pi.error ? `${pi.command}: ${pi.error}` : `${pi.command} is pi ${pi.version} (needs ${pi.need})`, fix: `install pi ${PI_SERIES} on ${where} (npm install -g @earendil-works/pi-coding-agent@${PI_SERIES}), or name it with --pi <command>` },
		git.ok ? { name: "git", ok: true, detail: `git ${git.version}` } : { name: "git", ok: false, detail: `git: ${git.error}`, fix: `install git on ${where}` },
		dir.ok ? { name: "dir", ok: true, detail: `${dir.path} is writable` } : { name: "dir", ok: false, detail: `${dir.path}: ${dir.error}`, fix: `make ${dir.path} writable by the login user, or choose another with --dir` },
		disk.ok
			? { name: "disk", ok: true, detail: `${gib(disk.freeBytes ?? 0)} free` }
			: { name: "disk", ok: false, detail: disk.error ? `free space unknown: ${disk.error}` : `${gib(disk.freeBytes ?? 0)} free in ${dir.path} (needs ${gib(disk.need)})`, fix: `free space on ${where}, or choose another --dir` },
	];
	if (pkg.version) {
		items.push(pkg.present ? { name: "board files", ok: true, detail: `version ${pkg.version} installed` } : { name: "board files", ok: false, detail: `version ${pkg.version} is not installed in ${dir.path}/pkg`, fix: `/agent-board targets check ${target} --install (copies them over ssh)` });
	}
	return items;
}
