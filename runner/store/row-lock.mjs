// Per-row lock: rows/<id>/lock, created with O_EXCL and holding its owner's pid and start time. It
// guards meta changes, resume, attach, merge and recording a dead runner's end. A lock is broken only
// when its owner is provably gone (or the file never got its content), by moving it aside with one
// rename, so two breakers cannot both win.
import { readFileSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { breakUnchanged, createExclusive, ownerText } from "./owner-file.mjs";
import { isAlive, processStartTime } from "./proc.mjs";

/** A lock file still empty after this long belongs to a holder that died between create and write. */
const EMPTY_LOCK_GRACE_MS = 2000;

let counter = 0;

/** @param {string} rowDir */
export function lockPath(rowDir) {
	return join(rowDir, "lock");
}

/**
 * @param {string} path
 * @returns {{ pid?: number, start?: string, token?: string } | undefined}
 */
function readLock(path) {
	try {
		const value = JSON.parse(readFileSync(path, "utf8"));
		return value && typeof value === "object" ? value : {};
	} catch (error) {
		return /** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT" ? undefined : {};
	}
}

/** The lock's text when its holder is provably gone (or it never got its content). @param {string} path */
function staleText(path) {
	const text = ownerText(path);
	if (text === undefined) return undefined;
	/** @type {{ pid?: unknown, start?: unknown }} */
	let owner = {};
	try {
		owner = JSON.parse(text) ?? {};
	} catch {
		// An empty or partial lock: its holder died between create and write, or is writing now.
	}
	if (typeof owner.pid === "number" && typeof owner.start === "string")
		return isAlive(owner.pid, owner.start) ? undefined : text;
	try {
		return Date.now() - statSync(path).mtimeMs > EMPTY_LOCK_GRACE_MS ? text : undefined;
	} catch {
		return undefined;
	}
}

/**
 * Tries once. Returns a release function, or undefined when another live holder has it.
 * @param {string} rowDir
 */
export function tryLockRow(rowDir) {
	return tryLockFile(lockPath(rowDir));
}

/**
 * The same lock at any path (the store's config.lock). Tries once.
 * @param {string} path
 */
export function tryLockFile(path) {
	const token = `${process.pid}-${Date.now()}-${++counter}`;
	for (let attempt = 0; attempt < 2; attempt++) {
		if (
			!createExclusive(
				path,
				JSON.stringify({ pid: process.pid, start: processStartTime(process.pid), token, at: Date.now() }),
			)
		) {
			const judged = staleText(path);
			if (judged === undefined) return undefined;
			// Only the lock judged stale is broken: not one another breaker took since.
			breakUnchanged(path, judged);
			continue;
		}
		return () => {
			// Release only our own lock: a breaker may have taken it over if we looked dead.
			if (readLock(path)?.token !== token) return;
			try {
				unlinkSync(path);
			} catch {
				// Already gone.
			}
		};
	}
	return undefined;
}

/**
 * Waits for the row lock (polling), runs `fn`, releases. Throws after `timeoutMs`.
 * @template T
 * @param {string} rowDir
 * @param {() => T | Promise<T>} fn
 * @param {{ timeoutMs?: number }} [options]
 * @returns {Promise<T>}
 */
export async function withRowLock(rowDir, fn, options = {}) {
	return withLockFile(lockPath(rowDir), fn, { what: "row is busy", ...options });
}

/**
 * withRowLock for a lock at any path.
 * @template T
 * @param {string} path
 * @param {() => T | Promise<T>} fn
 * @param {{ timeoutMs?: number, what?: string }} [options]
 * @returns {Promise<T>}
 */
export async function withLockFile(path, fn, options = {}) {
	const deadline = Date.now() + (options.timeoutMs ?? 10_000);
	for (;;) {
		const release = tryLockFile(path);
		if (release) {
			try {
				return await fn();
			} finally {
				release();
			}
		}
		if (Date.now() > deadline) throw new Error(`${options.what ?? "busy"}: ${path} is held by another process`);
		await new Promise((resolve) => setTimeout(resolve, 20 + Math.floor(Math.random() * 30)));
	}
}
