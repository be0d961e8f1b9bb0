// A row's session on its way to a target and back: its digest (size + sha256), and a receiver that
// takes it in chunks and replaces the target's copy only when the whole of it arrived. A session has a
// size limit: pi loads it whole, and a file past it (a tampered one, say) is refused with its size, never
// read into memory.
import { createHash } from "node:crypto";
import { closeSync, constants, createWriteStream, fstatSync, openSync, readSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { BoardError } from "../life/reasons.mjs";
import { ensureDir, FILE_MODE } from "../store/fs-util.mjs";

/** The largest session that travels, is mirrored or is resumed (1 GiB; pi reads a session whole). */
export const MAX_SESSION_BYTES = 1024 ** 3;

/** "1.5 GiB", "640 KiB": a size in words. @param {number} bytes */
export function sizeWords(bytes) {
	const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
	let value = bytes;
	let unit = 0;
	while (value >= 1024 && unit < units.length - 1) {
		value /= 1024;
		unit += 1;
	}
	return unit === 0 ? `${bytes} bytes` : `${Number.isInteger(value) ? value : value.toFixed(1)} ${units[unit]}`;
}

/** A session over the limit, in words that name it. @param {string} path @param {number} size @param {string} [where] */
export function sessionTooLarge(path, size, where = "") {
	return new BoardError(
		"session-too-large",
		`session ${path}${where ? ` on ${where}` : ""} is ${sizeWords(size)}, over the ${sizeWords(MAX_SESSION_BYTES)} a session may be: it is not sent, mirrored or resumed`,
	);
}

/**
 * Size and sha256 of a file (read in chunks, never through a symlink), or null when there is none;
 * throws a session-too-large BoardError for a file over MAX_SESSION_BYTES.
 * @param {string} path @returns {{ size: number, sha256: string } | null}
 */
export function fileDigest(path) {
	let fd;
	try {
		fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
	} catch (error) {
		if (/** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT") return null;
		throw error;
	}
	try {
		const size = fstatSync(fd).size;
		if (size > MAX_SESSION_BYTES) throw sessionTooLarge(path, size);
		const hash = createHash("sha256");
		const buffer = Buffer.alloc(Math.min(size, 1024 * 1024) || 1);
		let read = 0;
		for (let n = 0; read < size; read += n) {
			n = readSync(fd, buffer, 0, Math.min(buffer.length, size - read), read);
			if (n <= 0) break;
			hash.update(buffer.subarray(0, n));
		}
		return { size: read, sha256: hash.digest("hex") };
	} finally {
		closeSync(fd);
	}
}

/** @param {{ size: number, sha256: string } | null} a @param {{ size: number, sha256: string } | null} b */
export function sameDigest(a, b) {
	return a === b || (!!a && !!b && a.size === b.size && a.sha256 === b.sha256);
}

/**
 * Receives session bytes (base64 chunks in order) into a temp file and renames it over the row's
 * session once size and hash match what the config announced; a partial transfer changes nothing.
 * @param {string} path @param {{ size: number, sha256: string }} expected
 */
export function sessionReceiver(path, expected) {
	ensureDir(dirname(path));
	const temp = `${path}.incoming-${process.pid}`;
	rmSync(temp, { force: true });
	// "wx": nothing planted at the temp name is written through.
	const out = createWriteStream(temp, { mode: FILE_MODE, flags: "wx" });
	const hash = createHash("sha256");
	let size = 0;
	return {
		/** @param {number} offset @param {string} data */
		chunk(offset, data) {
			if (offset !== size) throw new Error(`session chunk at ${offset}, expected ${size}`);
			const bytes = Buffer.from(data, "base64");
			hash.update(bytes);
			size += bytes.length;
			out.write(bytes);
		},
		/** @returns {Promise<number>} */
		finish() {
			return new Promise((resolvePromise, reject) => {
				out.end(() => {
					const sha256 = hash.digest("hex");
					if (size !== expected.size || sha256 !== expected.sha256)
						return reject(new Error(`session transfer incomplete: ${size} of ${expected.size} bytes`));
					renameSync(temp, path);
					resolvePromise(size);
				});
			});
		},
	};
}
