// Files created with O_EXCL that name their owner (row locks, concurrency slots): one way to create
// them, and one way to break one whose owner is gone.
import { closeSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync, constants } from "node:fs";
import { FILE_MODE } from "./fs-util.mjs";

let counter = 0;

/**
 * Creates `path` holding `text`, only if nothing is there (never through a symlink). Returns false
 * when the file exists; other errors (EACCES, ENOSPC, EROFS...) are thrown. A file whose content
 * could not be written is removed again, so nobody mistakes it for a claimer that died mid-write.
 * @param {string} path @param {string} text
 */
export function createExclusive(path, text) {
	let fd;
	try {
		fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, FILE_MODE);
	} catch (error) {
		if (/** @type {NodeJS.ErrnoException} */ (error).code === "EEXIST") return false;
		throw error;
	}
	try {
		writeSync(fd, text);
	} catch (error) {
		closeSync(fd);
		unlinkSync(path);
		throw error;
	}
	closeSync(fd);
	return true;
}

/**
 * Breaks an owner file the caller found stale: moves it aside with one rename, so of two breakers
 * only one wins. If the file moved turns out to be live after all (its owner re-created it between
 * the caller's check and the rename), it is put back: linked, never renamed, so a file someone else
 * created meanwhile is not replaced.
 * @param {string} path @param {(movedPath: string) => boolean} isLive
 */
export function breakStale(path, isLive) {
	const aside = `${path}.stale-${process.pid}-${Date.now()}-${++counter}`;
	try {
		renameSync(path, aside);
	} catch {
		return;
	}
	if (isLive(aside)) {
		try {
			linkSync(aside, path);
		} catch {
			// The path is held again; the moved owner's release will find it is not theirs.
		}
	}
	try {
		unlinkSync(aside);
	} catch {
		// Already gone.
	}
}

/** An owner file's text; undefined when it is gone, a text no owner writes when it cannot be read. @param {string} path */
export function ownerText(path) {
	try {
		return readFileSync(path, "utf8");
	} catch (error) {
		const code = /** @type {NodeJS.ErrnoException} */ (error).code;
		return code === "ENOENT" ? undefined : `unreadable: ${code}`;
	}
}

/**
 * Breaks an owner file the caller judged stale from its text `judged`, only if it still holds that text:
 * a breaker whose judgement took long (a /proc scan) does not move the file another breaker re-created
 * meanwhile. Breakers that take turns (the queue's lock, for slots) never move a file that changed; a
 * file that changes between the re-read and the rename is put back (breakStale).
 * @param {string} path @param {string} judged
 */
export function breakUnchanged(path, judged) {
	if (ownerText(path) !== judged) return;
	breakStale(path, (moved) => ownerText(moved) !== judged);
}
