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

/** Size of a regular file inside `root` (not following a symlink), or -1. @param {string} root @param {string} path */
export function sizeInside(root, path) {
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

/** @param {string} path @returns {{ pid: number, start: string } | undefined} */
export function readProcessFile(path) {
	try {
		const value = JSON.parse(String(readInside(dirname(path), path) ?? ""));
		if (typeof value?.pid === "number" && typeof value?.start === "string") return value;
	} catch {
		// Missing or torn: no process recorded.
	}
	return undefined;
}

/** @param {string} runDir @returns {Record<string, unknown> | undefined} */
export function safeStatus(runDir) {
	try {
		const value = JSON.parse(String(readInside(runDir, join(runDir, "status.json")) ?? ""));
		return value && typeof value === "object" ? value : undefined;
	} catch {
		return undefined;
	}
}
