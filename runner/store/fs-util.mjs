// Durable file writes, the one atomic write of the package (the store, the board's prefs and attach
// record, ponytail's config): every write goes to a temp file in the same directory and is renamed over.
import { randomInt } from "node:crypto";
import { mkdirSync, renameSync, statfsSync, writeFileSync, unlinkSync } from "node:fs";
import { dirname, basename, join } from "node:path";

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

// Starts anywhere: a temp name must not be guessable by whoever else can write the directory.
let counter = randomInt(2 ** 40);

/** @param {string} dir */
export function ensureDir(dir) {
	mkdirSync(dir, { recursive: true, mode: DIR_MODE });
}

/** @param {string} path @param {string} text */
export function writeFileAtomic(path, text) {
	let temp = "";
	let created = false;
	try {
		// "wx": never write through something planted at the temp name (a symlink from a container's
		// agent in a dir it can write); a name that exists is skipped, not followed.
		for (let attempt = 0; ; attempt++) {
			counter += 1;
			temp = join(dirname(path), `.${basename(path)}.${process.pid}.${counter}.tmp`);
			try {
				created = true;
				writeFileSync(temp, text, { mode: FILE_MODE, flag: "wx" });
				break;
			} catch (error) {
				const taken = /** @type {NodeJS.ErrnoException} */ (error).code === "EEXIST";
				if (taken) created = false;
				if (!taken || attempt >= 8) throw error;
			}
		}
		renameSync(temp, path);
	} catch (error) {
		try {
			if (created) unlinkSync(temp);
		} catch {
			// The temp file may not exist; the original error matters.
		}
		throw error;
	}
}

/** @param {string} path @param {unknown} value */
export function writeJsonAtomic(path, value) {
	writeFileAtomic(path, `${JSON.stringify(value)}\n`);
}

// The one lenient JSON read lives with the reads that follow no symlink; its old home still names it.
export { readJsonObject } from "./safe-read.mjs";

/**
 * Parses a store file strictly: a BOM, an empty file or bad JSON is an error naming the file.
 * @param {string} text @param {string} name
 */
export function parseJsonStrict(text, name) {
	if (text.charCodeAt(0) === 0xfeff) throw new Error(`${name}: starts with a byte order mark`);
	if (!text.trim()) throw new Error(`${name}: empty file`);
	try {
		return JSON.parse(text);
	} catch (error) {
		throw new Error(`${name}: invalid JSON (${error instanceof Error ? error.message : String(error)})`);
	}
}

/**
 * Tells watchers that a row changed: notify/<rowId> is replaced atomically, so one inotify watch on
 * notify/ names exactly the rows that changed. Content is irrelevant; failures only delay a repaint.
 * @param {string} storeRoot @param {string} rowId
 */
export function touchNotify(storeRoot, rowId) {
	try {
		const dir = join(storeRoot, "notify");
		ensureDir(dir);
		writeFileAtomic(join(dir, rowId), `${Date.now()}\n`);
	} catch {
		// A full or read-only disk: the safety poll still notices.
	}
}

/** Below this many free bytes the store's disk counts as full: nothing starts, live rows say so. */
export const DISK_FULL_BYTES = 256 * 1024;

/** Bytes free for us on the file system that holds `path`, or undefined when it cannot be told. @param {string} path */
export function diskSpace(path) {
	try {
		const fs = statfsSync(path);
		return fs.bavail * fs.bsize;
	} catch {
		return undefined;
	}
}
