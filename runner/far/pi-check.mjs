// Whether a target's pi is the series the board speaks (host-check.mjs PI_SERIES), asked at launch:
// `pi --version` costs a node start, so the answer is remembered under <dir>/state/ per command,
// PATH and executable (path, size, mtime, inode); a changed pi is asked again.
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { ensureDir, writeJsonAtomic } from "../store/fs-util.mjs";
import { PI_SERIES, piVersionOk } from "./host-check.mjs";

/** The executable `name` runs, as a non-interactive shell would find it. @param {string} name */
export function which(name) {
	const candidates = name.includes("/")
		? [name]
		: (process.env.PATH ?? "")
				.split(delimiter)
				.filter(Boolean)
				.map((dir) => join(dir, name));
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

/** @typedef {{ ok: true, version: string } | { ok: false, reason: string }} PiCheck */

/** How long `pi --version` may take. */
const VERSION_TIMEOUT_MS = 60_000;

/**
 * @param {string} dir the target's dir (absolute) @param {string[]} command the pi command
 * @returns {PiCheck}
 */
export function piChecked(dir, command) {
	return piCheck(dir, command, (exe, args) => {
		try {
			return {
				out: execFileSync(exe, args, {
					encoding: "utf8",
					stdio: ["ignore", "pipe", "pipe"],
					timeout: VERSION_TIMEOUT_MS,
				}),
			};
		} catch (error) {
			return { error };
		}
	});
}

/** Asks in flight, by dir and command: a burst's launches at a new host share one `pi --version`. @type {Map<string, Promise<PiCheck>>} */
const asking = new Map();

/**
 * piChecked without blocking: the link's one channel (far-mux.mjs) serves every run of the host while
 * one run's pi is asked (a pi that hangs held every other run's frames, and a stop, for a minute).
 * @param {string} dir @param {string[]} command @returns {Promise<PiCheck>}
 */
export function piCheckedAsync(dir, command) {
	const key = JSON.stringify([dir, command]);
	const inFlight = asking.get(key);
	if (inFlight) return inFlight;
	const answer = askAsync(dir, command).finally(() => asking.delete(key));
	asking.set(key, answer);
	return answer;
}

/** @param {string} dir @param {string[]} command @returns {Promise<PiCheck>} */
async function askAsync(dir, command) {
	// A first pass finds the executable and the remembered answer; only a pi not asked yet is run.
	/** @type {[string, string[]] | undefined} */
	let asked;
	const remembered = piCheck(dir, command, (exe, args) => {
		asked = [exe, args];
		return { out: "" };
	});
	if (!asked) return remembered;
	const [exe, args] = asked;
	/** @type {{ out?: string, error?: unknown }} */
	const answer = await new Promise((resolvePromise) => {
		execFile(exe, args, { encoding: "utf8", timeout: VERSION_TIMEOUT_MS }, (error, stdout, stderr) =>
			resolvePromise(error ? { error: Object.assign(error, { stderr }) } : { out: stdout }),
		);
	});
	return piCheck(dir, command, () => answer);
}

/**
 * @param {string} dir @param {string[]} command
 * @param {(exe: string, args: string[]) => { out?: string, error?: unknown }} ask runs `pi --version`
 * @returns {PiCheck}
 */
function piCheck(dir, command, ask) {
	const [name = "pi", ...rest] = command;
	const exe = which(name);
	if (!exe)
		return {
			ok: false,
			reason: `pi not found: ${name} is not on this host's non-interactive PATH (install pi ${PI_SERIES}, or name it with --pi <command>)`,
		};
	const stat = statSync(exe);
	const key = createHash("sha256")
		.update(JSON.stringify([command, process.env.PATH ?? "", exe, stat.size, stat.mtimeMs, stat.ino]))
		.digest("hex")
		.slice(0, 16);
	const file = join(dir, "state", `pi-${key}.json`);
	let version = "";
	try {
		version = String(JSON.parse(readFileSync(file, "utf8")).version ?? "");
	} catch {
		// Not asked yet.
	}
	if (!version) {
		const answer = ask(exe, [...rest, "--version"]);
		if (answer.error !== undefined || answer.out === undefined) {
			const error = answer.error;
			const stderr = String(/** @type {{ stderr?: unknown } | undefined} */ (error)?.stderr ?? "")
				.trim()
				.split("\n")
				.pop();
			return {
				ok: false,
				reason: `${command.join(" ")} --version failed: ${stderr || (error instanceof Error ? error.message : String(error))}`,
			};
		}
		version = answer.out.trim().split("\n").pop()?.trim() ?? "";
		// The first pass of piCheckedAsync learns what to ask; it records nothing.
		if (!version) return { ok: false, reason: `${command.join(" ")} --version said nothing` };
		try {
			ensureDir(join(dir, "state"));
			writeJsonAtomic(file, { command, exe, version, at: Date.now() });
		} catch {
			// Asked again next time.
		}
	}
	return piVersionOk(version)
		? { ok: true, version }
		: {
				ok: false,
				reason: `${command.join(" ")} is pi ${version}; the board needs pi ${PI_SERIES}.x (install it, or name another with --pi <command>)`,
			};
}
