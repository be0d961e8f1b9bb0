// A row's session on its way to a target and back: its digest (size + sha256), and a receiver that
// takes it in chunks and replaces the target's copy only when the whole of it arrived.
import { createHash } from "node:crypto";
import { createWriteStream, existsSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { ensureDir, FILE_MODE } from "../store/fs-util.mjs";

/** @param {string} path @returns {{ size: number, sha256: string } | null} */
export function fileDigest(path) {
	if (!existsSync(path)) return null;
	const bytes = readFileSync(path);
	return { size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
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
					if (size !== expected.size || sha256 !== expected.sha256) return reject(new Error(`session transfer incomplete: ${size} of ${expected.size} bytes`));
					renameSync(temp, path);
					resolvePromise(size);
				});
			});
		},
	};
}

