// Store directories must be real directories of ours that nobody else can write: a directory another
// user can write lets them plant messages, sessions or symlinks in it. One check, for the runner (its
// run's directories and session file, once per run) and the extension (store-guard.ts).
import { closeSync, constants, fchmodSync, fstatSync, lstatSync, openSync } from "node:fs";
import { dirname, join } from "node:path";
import { FILE_MODE } from "./fs-util.mjs";

/**
 * What makes a directory's owner or mode unsafe ("owned by uid 7, not by you (uid 0)", "writable by
 * group or others (mode 0777); run: chmod 700 <path>"), or undefined.
 * @param {import("node:fs").Stats} stat @param {string} path
 */
export function ownerModeProblem(stat, path) {
	const uid = process.getuid?.();
	if (uid !== undefined && stat.uid !== uid) return `owned by uid ${stat.uid}, not by you (uid ${uid})`;
	if ((stat.mode & 0o022) !== 0)
		return `writable by group or others (mode ${(stat.mode & 0o777).toString(8).padStart(4, "0")}); run: chmod 700 ${path}`;
	return undefined;
}

/**
 * A store directory: real (not a symlink), a directory, ours, writable by nobody else. Throws
 * "refusing <what> <path>: <problem>"; ENOENT is thrown as it is.
 * @param {string} path @param {string} what
 */
export function checkStoreDir(path, what) {
	const stat = lstatSync(path);
	const problem = stat.isSymbolicLink()
		? "is a symbolic link (not followed)"
		: !stat.isDirectory()
			? "not a directory"
			: ownerModeProblem(stat, path);
	if (problem) throw new Error(`refusing ${what} ${path}: ${problem}`);
}

/**
 * What keeps a store file from being one plain file of its own, or undefined: a symlink or a hard link
 * would carry what is written to it to a file outside the store, a FIFO or device would block or leak.
 * The same words for every file the store writes (append-file.mjs) and a run's session file.
 * @param {import("node:fs").Stats} stat
 */
export function plainFileProblem(stat) {
	if (stat.isSymbolicLink()) return "is a symbolic link (not followed)";
	if (!stat.isFile()) return "not a regular file";
	if (stat.nlink !== 1) return `has ${stat.nlink} hard links (another name for a file elsewhere)`;
	return undefined;
}

/**
 * What is wrong with a session file pi is about to append to, or undefined (absent is fine: pi creates
 * it with O_EXCL): a plain file (plainFileProblem) and ours.
 * @param {import("node:fs").Stats} stat
 */
function sessionProblem(stat) {
	const plain = plainFileProblem(stat);
	if (plain) return plain;
	// Its mode is ours to fix (protectSessionFile); its owner is not.
	const uid = process.getuid?.();
	return uid !== undefined && stat.uid !== uid ? `owned by uid ${stat.uid}, not by you (uid ${uid})` : undefined;
}

/** @param {string} path @returns {string | undefined} "session file <path> <problem>" */
export function checkSessionFile(path) {
	let stat;
	try {
		stat = lstatSync(path);
	} catch (error) {
		return /** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT"
			? undefined
			: `session file ${path}: ${String(error)}`;
	}
	const problem = sessionProblem(stat);
	return problem ? `refusing session file ${path}: ${problem}` : undefined;
}

/**
 * Makes the session file private (pi creates it with the default umask) without following a symlink:
 * opened O_NOFOLLOW, checked, then fchmod. Returns the problem when the file is no longer safe.
 * @param {string} path @returns {string | undefined}
 */
export function protectSessionFile(path) {
	let fd;
	try {
		fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	} catch (error) {
		const code = /** @type {NodeJS.ErrnoException} */ (error).code;
		if (code === "ENOENT") return undefined;
		return code === "ELOOP" ? `refusing session file ${path}: is a symbolic link (not followed)` : undefined;
	}
	try {
		const stat = fstatSync(fd);
		const problem = sessionProblem(stat);
		if (problem) return `refusing session file ${path}: ${problem}`;
		if ((stat.mode & 0o777) !== FILE_MODE) fchmodSync(fd, FILE_MODE);
		return undefined;
	} catch {
		return undefined;
	} finally {
		closeSync(fd);
	}
}

/**
 * What is wrong with a run's directories (row, runs, run, sessions, and its inbox, claimed and
 * receipts when they exist) or its session file, checked once by its runner before pi gets them.
 * @param {string} runDir @param {string} sessionFile @returns {string | undefined}
 */
export function runPlaceProblem(runDir, sessionFile) {
	const dirs = [
		[dirname(dirname(runDir)), "row directory"],
		[dirname(runDir), "runs directory"],
		[runDir, "run directory"],
		[dirname(sessionFile), "sessions directory"],
		...["inbox", "claimed", "receipts"].map((name) => [join(runDir, name), `${name} directory`]),
	];
	for (const [path = "", what = ""] of dirs) {
		try {
			checkStoreDir(path, what);
		} catch (error) {
			if (/** @type {NodeJS.ErrnoException} */ (error).code !== "ENOENT")
				return error instanceof Error ? error.message : String(error);
		}
	}
	return checkSessionFile(sessionFile);
}
