// Reading files a target may have planted: a container's run and session dirs are writable by its
// agent, which could put a symlink where events.jsonl was (to ~/.ssh/id_ed25519, say) and have this
// side stream the user's key back into the row. A file is read only when it opens without following
// a symlink, is a regular file, and (where /proc tells) really lies inside the directory it should.
import {
	closeSync,
	constants,
	fstatSync,
	lstatSync,
	openSync,
	readdirSync,
	readFileSync,
	readlinkSync,
	readSync,
	realpathSync,
} from "node:fs";
import { dirname, join, sep } from "node:path";

/** @param {string} root */
function realRoot(root) {
	try {
		return realpathSync(root);
	} catch {
		return undefined;
	}
}

/**
 * Opens `path` for reading if it is a regular file inside `root`; undefined otherwise.
 * @param {string} root @param {string} path
 * @returns {number | undefined} an fd the caller closes
 */
function openInside(root, path) {
	let fd;
	try {
		fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	} catch {
		return undefined;
	}
	try {
		if (!fstatSync(fd).isFile()) throw new Error("not a regular file");
		const base = realRoot(root);
		let real;
		try {
			real = readlinkSync(`/proc/self/fd/${fd}`);
		} catch {
			real = undefined; // no /proc here: O_NOFOLLOW on the last component is what we have
		}
		if (real !== undefined && (!base || !real.startsWith(base + sep))) throw new Error("outside its directory");
		return fd;
	} catch {
		closeSync(fd);
		return undefined;
	}
}

/**
 * Size of a regular file (a symlink is not followed), or -1. A hint of how much there is to read: the read
 * itself (readInside) is what checks the file is inside its directory.
 * @param {string} path
 */
export function plainFileSize(path) {
	try {
		const stat = lstatSync(path);
		return stat.isFile() ? stat.size : -1;
	} catch {
		return -1;
	}
}

/**
 * Bytes [from, to) of a regular file inside `root` (to: its end), or undefined.
 * @param {string} root @param {string} path @param {number} [from] @param {number} [to]
 */
export function readInside(root, path, from = 0, to) {
	const fd = openInside(root, path);
	if (fd === undefined) return undefined;
	try {
		const end = to ?? fstatSync(fd).size;
		const buffer = Buffer.alloc(Math.max(0, end - from));
		let read = 0;
		while (read < buffer.length) {
			const n = readSync(fd, buffer, read, buffer.length - read, from + read);
			if (n <= 0) break;
			read += n;
		}
		return buffer.subarray(0, read);
	} finally {
		closeSync(fd);
	}
}

/** Names in a real directory (not a symlink to one), sorted; [] otherwise. @param {string} dir */
export function listInside(dir) {
	try {
		if (!lstatSync(dir).isDirectory()) return [];
		return readdirSync(dir).sort();
	} catch {
		return [];
	}
}

/**
 * A store file's text, read as readFileSync reads it but never through a symlink (ELOOP) and only from a
 * regular file (a FIFO there would block the reader): errors are thrown with their code, as readFileSync's.
 * @param {string} path @returns {string}
 */
export function readTextNoFollow(path) {
	const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	try {
		if (!fstatSync(fd).isFile()) throw Object.assign(new Error(`${path}: not a regular file`), { code: "EFTYPE" });
		return readFileSync(fd, "utf8");
	} finally {
		closeSync(fd);
	}
}

/**
 * The one lenient JSON read: a JSON object file (a file its writer may not have made yet, or one a target
 * could have planted) read without following a symlink; missing, a symlink, not a regular file, not JSON
 * or not an object is undefined.
 * @param {string} path @returns {Record<string, unknown> | undefined}
 */
export function readJsonObject(path) {
	try {
		const value = JSON.parse(String(readInside(dirname(path), path) ?? ""));
		return value && typeof value === "object" && !Array.isArray(value) ? value : undefined;
	} catch {
		return undefined;
	}
}

/** @param {string} path @returns {{ pid: number, start: string } | undefined} */
export function readProcessFile(path) {
	const value = readJsonObject(path);
	return typeof value?.pid === "number" && typeof value?.start === "string"
		? /** @type {{ pid: number, start: string }} */ (value)
		: undefined;
}

/** @param {string} runDir @returns {Record<string, unknown> | undefined} */
export function safeStatus(runDir) {
	return readJsonObject(join(runDir, "status.json"));
}
