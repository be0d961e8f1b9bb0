// Whether a target's pi is the series the board speaks (host-check.mjs PI_SERIES), asked at launch:
// `pi --version` costs a node start, so the answer is remembered under <dir>/state/ per command,
// PATH and executable (path, size, mtime, inode); a changed pi is asked again.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { ensureDir, writeJsonAtomic } from "../store/fs-util.mjs";
import { PI_SERIES, piVersionOk } from "./host-check.mjs";

/** The executable `name` runs, as a non-interactive shell would find it. @param {string} name */
export function which(name) {
	const candidates = name.includes("/") ? [name] : (process.env.PATH ?? "").split(delimiter).filter(Boolean).map((dir) => join(dir, name));
	for (const path of candidates) {
		try {
			accessSync(path, constants.X_OK);
			if (statSync(path).isFile()) return isAbsolute(path) ? path : join(process.cwd(), path);
		} catch {
			// Not here.
		}
	}
	return undefined;
}

/**
 * @param {string} dir the target's dir (absolute) @param {string[]} command the pi command
 * @returns {{ ok: true, version: string } | { ok: false, reason: string }}
 */
export function piChecked(dir, command) {
	const [name = "pi", ...rest] = command;
	const exe = which(name);
	if (!exe) return { ok: false, reason: `pi not found: ${name} is not on this host's non-interactive PATH (install pi ${PI_SERIES}, or name it with --pi <command>)` };
	const stat = statSync(exe);
	const key = createHash("sha256").update(JSON.stringify([command, process.env.PATH ?? "", exe, stat.size, stat.mtimeMs, stat.ino])).digest("hex").slice(0, 16);
	const file = join(dir, "state", `pi-${key}.json`);
	let version = "";
	try {
		version = String(JSON.parse(readFileSync(file, "utf8")).version ?? "");
	} catch {
		// Not asked yet.
	}
	if (!version) {
		try {
			version = execFileSync(exe, [...rest, "--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 }).trim().split("\n").pop()?.trim() ?? "";
		} catch (error) {
			const stderr = String(/** @type {{ stderr?: unknown }} */ (error).stderr ?? "").trim().split("\n").pop();
			return { ok: false, reason: `${command.join(" ")} --version failed: ${stderr || (error instanceof Error ? error.message : String(error))}` };
		}
		try {
			ensureDir(join(dir, "state"));
			writeJsonAtomic(file, { command, exe, version, at: Date.now() });
		} catch {
			// Asked again next time.
		}
	}
	return piVersionOk(version) ? { ok: true, version } : { ok: false, reason: `${command.join(" ")} is pi ${version}; the board needs pi ${PI_SERIES}.x (install it, or name another with --pi <command>)` };
}
