/**
 * The store protects itself: it must belong to the user and be writable by nobody else, nothing in
 * it is followed through a symlink, and disk or permission errors name the path and the errno.
 */
import {
	closeSync,
	constants,
	fstatSync,
	lstatSync,
	openSync,
	readFileSync,
	rmSync,
	statSync,
	type Stats,
} from "node:fs";
import { join } from "node:path";
import { ownerModeProblem } from "../../../runner/store/dir-guard.mjs";
import { isValidId } from "./ids.ts";

/** Directories directly under the store root that are checked like the root itself. */
const STORE_SUBDIRS = ["rows", "sessions", "slots", "worktrees", "queue", "notify", "live", "words"];

const ERRNO_TEXT: Record<string, string> = {
	ENOSPC: "no space left on device",
	EDQUOT: "disk quota exceeded",
	EACCES: "permission denied",
	EPERM: "operation not permitted",
	EROFS: "read-only file system",
	ENOENT: "no such file or directory",
	ELOOP: "is a symbolic link (not followed)",
	ENOTDIR: "not a directory",
	EISDIR: "is a directory",
	EMFILE: "too many open files",
	EIO: "input/output error",
};

export class StoreGuardError extends Error {
	readonly path: string;
	// No parameter properties: benches and test children load this file with Node's strip-only TypeScript.
	constructor(message: string, path: string) {
		super(message);
		this.name = "StoreGuardError";
		this.path = path;
	}
}

function errnoOf(error: unknown): string | undefined {
	const code = (error as NodeJS.ErrnoException | undefined)?.code;
	return typeof code === "string" ? code : undefined;
}

/**
 * "<action> <path>: ENOSPC (no space left on device)". Node's own messages repeat the syscall and
 * quote the path differently per call; one format makes the command line and the row agree.
 */
export function fsErrorMessage(error: unknown, rawPath: string, action = "cannot access"): string {
	const path = realName(rawPath);
	const code = errnoOf(error);
	if (!code) return `${action} ${path}: ${error instanceof Error ? error.message : String(error)}`;
	return `${action} ${path}: ${code} (${ERRNO_TEXT[code] ?? (error as Error).message})`;
}

/** Wraps an fs error so its message names the path and errno; other errors pass through. */
export function describeFsError(error: unknown, path: string, action?: string): Error {
	if (!errnoOf(error) || described.has(error as Error))
		return error instanceof Error ? error : new Error(String(error));
	const wrapped = new Error(fsErrorMessage(error, path, action)) as NodeJS.ErrnoException;
	wrapped.code = errnoOf(error);
	described.add(wrapped);
	return wrapped;
}

/** An fs error (it has an errno) that describeFsError has not worded yet. */
export function isUnwordedFsError(error: unknown): boolean {
	return errnoOf(error) !== undefined && !described.has(error as Error);
}

/** Errors already worded by describeFsError: an outer caller keeps the inner, more precise path. */
const described = new WeakSet<Error>();

/** The file a temp+rename write was for: ".meta.json.123.4.tmp" is reported as "meta.json". */
function realName(path: string): string {
	return path.replace(/\/\.([^/]+)\.\d+\.\d+\.tmp$/, "/$1");
}

function checkOwned(stat: Stats, path: string, what: string): void {
	const problem = ownerModeProblem(stat, path);
	if (problem) throw new StoreGuardError(`agent-board: refusing ${what} ${path}: ${problem}`, path);
}

/**
 * Refuses a store another user could tamper with: the root (followed, so a symlinked store location
 * still works) and its top-level directories (not followed) must be directories owned by the current
 * uid and not writable by group or others. A missing root is fine: it is created 0700. Throws
 * StoreGuardError naming the path. Reads only: safe on a read-only or full store.
 */
export function guardStore(root: string): void {
	let stat: Stats;
	try {
		stat = statSync(root);
	} catch (error) {
		if (errnoOf(error) === "ENOENT") return;
		throw new StoreGuardError(`agent-board: ${fsErrorMessage(error, root, "cannot use store")}`, root);
	}
	if (!stat.isDirectory()) throw new StoreGuardError(`agent-board: refusing store ${root}: not a directory`, root);
	checkOwned(stat, root, "store");
	for (const name of STORE_SUBDIRS) {
		const path = join(root, name);
		let sub: Stats;
		try {
			sub = lstatSync(path);
		} catch (error) {
			if (errnoOf(error) === "ENOENT") continue;
			throw new StoreGuardError(`agent-board: ${fsErrorMessage(error, path, "cannot use store directory")}`, path);
		}
		if (sub.isSymbolicLink())
			throw new StoreGuardError(
				`agent-board: refusing store directory ${path}: is a symbolic link (not followed)`,
				path,
			);
		if (!sub.isDirectory())
			throw new StoreGuardError(`agent-board: refusing store directory ${path}: not a directory`, path);
		checkOwned(sub, path, "store directory");
	}
}

/**
 * A directory inside the store: never a symlink to one, ours, writable by nobody else. Throws
 * "<label>: is a symbolic link (not followed)" or "<label>: refusing <path>: writable by group or others ...".
 */
export function assertRealDir(path: string, label: string): void {
	let stat: Stats;
	try {
		stat = lstatSync(path);
	} catch (error) {
		if (errnoOf(error) === "ENOENT") throw Object.assign(new Error(`${label}: missing`), { code: "ENOENT" });
		throw new Error(`${label}: ${fsErrorMessage(error, path, "cannot read")}`);
	}
	if (stat.isSymbolicLink()) throw new Error(`${label}: is a symbolic link (not followed)`);
	if (!stat.isDirectory()) throw new Error(`${label}: not a directory`);
	// The same stat: another user's directory, or one others can write, is refused like the store's own.
	const problem = ownerModeProblem(stat, path);
	if (problem) throw new Error(`${label}: refusing ${path}: ${problem}`);
}

/**
 * lstat of a store file that must be a plain file: a symlink, FIFO or device is refused before it
 * is opened (a FIFO named meta.json would otherwise block the reader forever).
 */
export function lstatStoreFile(path: string, label: string): Stats {
	const stat = lstatSync(path);
	if (stat.isSymbolicLink()) throw new Error(`${label}: is a symbolic link (not followed)`);
	if (!stat.isFile()) throw new Error(`${label}: not a regular file`);
	return stat;
}

/** Reads a store file without following a symlink at its last component (O_NOFOLLOW) or blocking on a FIFO. */
export function readFileNoFollow(path: string, label: string): string {
	let fd: number;
	try {
		fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	} catch (error) {
		if (errnoOf(error) === "ELOOP") throw new Error(`${label}: is a symbolic link (not followed)`);
		throw error;
	}
	try {
		if (!fstatSync(fd).isFile()) throw new Error(`${label}: not a regular file`);
		return readFileSync(fd, "utf8");
	} finally {
		closeSync(fd);
	}
}

/**
 * Removes a row directory whose dispatch failed half way (ENOSPC, EACCES...), so no junk
 * "meta.json: missing" row is left behind. Only a real directory directly under `rowsDir` is
 * removed; rm does not follow symlinks inside it. Returns false when there was nothing to remove.
 * Errors while cleaning are swallowed: the caller reports the original failure.
 */
export function removeHalfRow(rowsDir: string, id: string): boolean {
	if (!isValidId(id)) return false;
	const dir = join(rowsDir, id);
	try {
		if (!lstatSync(dir).isDirectory()) return false;
		rmSync(dir, { recursive: true, force: true });
		return true;
	} catch {
		return false;
	}
}
