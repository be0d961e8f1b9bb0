/**
 * The web server's files in the store, `web/`: its record (`server.json`: pid + start time, where it
 * listens), its login token (`token`) and its log. The server is their one writer (it creates the
 * record whole and exclusively once it listens, writes the token after it, and removes both as it exits); the
 * extension only reads them, and signals the pid only while its start time still matches.
 */
import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, linkSync, openSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkStoreDir } from "../../runner/store/dir-guard.mjs";
import { ensureDir, parseJsonStrict, writeFileAtomic } from "../../runner/store/fs-util.mjs";
import { breakStale } from "../../runner/store/owner-file.mjs";
import { isAlive } from "../../runner/store/proc.mjs";

export interface ServerRecord {
	pid: number;
	/** /proc start time of `pid`: the record names this process only while it matches. */
	start: string;
	/** Address it listens on, as given (`127.0.0.1`, `0.0.0.0`, `::1`, a name). */
	host: string;
	port: number;
	startedAt: number;
}

export const webDir = (storeDir: string): string => join(storeDir, "web");
export const recordPath = (storeDir: string): string => join(webDir(storeDir), "server.json");
export const tokenPath = (storeDir: string): string => join(webDir(storeDir), "token");
export const logPath = (storeDir: string): string => join(webDir(storeDir), "server.log");

/** Creates web/ (0700) and refuses one that is a symlink, not ours, or writable by others. */
export function ensureWebDir(storeDir: string): string {
	const dir = webDir(storeDir);
	ensureDir(dir);
	checkStoreDir(dir, "web directory");
	return dir;
}

/** A small file of ours, read without following a symlink; undefined when absent. */
function readPrivate(path: string): string | undefined {
	let fd: number;
	try {
		fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
		throw new Error(`cannot read ${path}: ${(error as Error).message}`);
	}
	try {
		const stat = fstatSync(fd);
		if (!stat.isFile() || stat.size > 64 * 1024) throw new Error(`refusing ${path}: not a small regular file`);
		if (process.getuid && stat.uid !== process.getuid())
			throw new Error(`refusing ${path}: owned by uid ${stat.uid}, not by you`);
		return readFileSync(fd, "utf8");
	} finally {
		closeSync(fd);
	}
}

/** What is wrong with a parsed record, or undefined. */
export function recordProblem(value: unknown): string | undefined {
	if (!value || typeof value !== "object") return "not an object";
	const r = value as Record<string, unknown>;
	if (!Number.isInteger(r.pid) || (r.pid as number) <= 1) return "/pid must be a process id";
	if (typeof r.start !== "string" || !r.start) return "/start must be a start time";
	if (typeof r.host !== "string" || !r.host) return "/host must be a string";
	if (!Number.isInteger(r.port) || (r.port as number) < 1 || (r.port as number) > 65535)
		return "/port must be a port number";
	if (typeof r.startedAt !== "number") return "/startedAt must be a time";
	return undefined;
}

export function readRecord(storeDir: string): ServerRecord | undefined {
	const path = recordPath(storeDir);
	const text = readPrivate(path);
	if (text === undefined) return undefined;
	const value: unknown = parseJsonStrict(text, path);
	const problem = recordProblem(value);
	if (problem) throw new Error(`${path}: ${problem}`);
	return value as ServerRecord;
}

/** The record of a server that runs now (its pid with its recorded start time), else undefined. */
export function liveRecord(storeDir: string): ServerRecord | undefined {
	const record = readRecord(storeDir);
	return record && isAlive(record.pid, record.start) ? record : undefined;
}

/** The login token of the server `pid` (the file names the server that wrote it), or undefined. */
export function readToken(storeDir: string, pid: number): string | undefined {
	const match = /^(\d+) ([A-Za-z0-9_-]{20,})\n?$/.exec(readPrivate(tokenPath(storeDir)) ?? "");
	return match && Number(match[1]) === pid ? match[2] : undefined;
}

/** Server side: "<pid> <token>", 0600, temp + rename. */
export function writeToken(storeDir: string, pid: number, token: string): void {
	ensureWebDir(storeDir);
	writeFileAtomic(tokenPath(storeDir), `${pid} ${token}\n`);
}

/**
 * Creates `path` holding `text` only if nothing is there, whole at once: written to a temp name and
 * linked into place, so a reader never sees it half written. False when it exists.
 */
function createWhole(path: string, text: string): boolean {
	const temp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
	writeFileSync(temp, text, { mode: 0o600, flag: "wx" });
	try {
		linkSync(temp, path);
		return true;
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
		throw error;
	} finally {
		unlinkSync(temp);
	}
}

/**
 * Server side: records this process as the store's web server, once it listens. Returns the record of
 * another live server instead when there is one; a record whose process is gone is broken and replaced.
 */
export function claimRecord(storeDir: string, record: ServerRecord): ServerRecord | undefined {
	ensureWebDir(storeDir);
	const path = recordPath(storeDir);
	for (let attempt = 0; attempt < 5; attempt++) {
		if (createWhole(path, `${JSON.stringify(record)}\n`)) return undefined;
		let other: ServerRecord | undefined;
		try {
			other = readRecord(storeDir);
		} catch {
			other = undefined;
		}
		if (other && isAlive(other.pid, other.start)) return other;
		breakStale(path, (moved) => {
			try {
				const held = JSON.parse(readFileSync(moved, "utf8")) as ServerRecord;
				return !recordProblem(held) && isAlive(held.pid, held.start);
			} catch {
				return false;
			}
		});
	}
	throw new Error(`cannot claim ${path}: it keeps coming back`);
}

/** Server side, on exit: removes the record (only if it still names this process) and the token. */
export function dropRecord(storeDir: string, pid: number): void {
	try {
		if (readRecord(storeDir)?.pid !== pid) return;
		unlinkSync(recordPath(storeDir));
		unlinkSync(tokenPath(storeDir));
	} catch {
		// Gone already, or not ours: the next server breaks a stale record.
	}
}
