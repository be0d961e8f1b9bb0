// Opening a file of the store to append to it, never through what was planted in its place: a symlink
// is not followed (O_NOFOLLOW), a FIFO does not block the opener (O_NONBLOCK), and what is not one plain
// file of its own (a FIFO, a device, a hard link to a file elsewhere) is closed again unwritten. The
// refusal names the file and why, in the words the board's check of a run's files uses.
import { closeSync, constants, fstatSync, openSync, writeSync } from "node:fs";
import { basename } from "node:path";
import { plainFileProblem } from "./dir-guard.mjs";
import { FILE_MODE } from "./fs-util.mjs";

/** A file refused for what it is, not for a failing disk: "events.jsonl: is a symbolic link (not followed)". */
export class PlantedFileError extends Error {
	/** @param {string} path @param {string} problem */
	constructor(path, problem) {
		super(`${basename(path)}: ${problem}`);
		this.name = "PlantedFileError";
		this.path = path;
	}
}

/**
 * A descriptor appending to `path` (created 0600 when absent). Throws PlantedFileError for a symlink or
 * a file of the wrong kind, and the open's own error otherwise (ENOSPC, EACCES...).
 * @param {string} path @returns {number}
 */
export function openAppend(path) {
	let fd;
	try {
		fd = openSync(
			path,
			constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
			FILE_MODE,
		);
	} catch (error) {
		const code = /** @type {NodeJS.ErrnoException} */ (error).code;
		if (code === "ELOOP") throw new PlantedFileError(path, "is a symbolic link (not followed)");
		// A FIFO without a reader (O_NONBLOCK), a directory in the file's place.
		if (code === "ENXIO") throw new PlantedFileError(path, "not a regular file");
		if (code === "EISDIR") throw new PlantedFileError(path, "a directory, not a file");
		throw error;
	}
	const stat = fstatSync(fd);
	const problem = plainFileProblem(stat);
	if (problem) {
		closeSync(fd);
		throw new PlantedFileError(path, problem);
	}
	return fd;
}

/** Appends `text` to `path` as openAppend opens it, in one write. @param {string} path @param {string} text */
export function appendNoFollow(path, text) {
	const fd = openAppend(path);
	try {
		writeSync(fd, text);
	} finally {
		closeSync(fd);
	}
}
