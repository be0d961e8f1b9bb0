// A run's own files as its runner writes them, so that a full or failing disk never kills the run:
// every write is caught; what cannot be written waits in memory (bounded) or is dropped with a count,
// and goes out with the next write that succeeds. events.jsonl and stderr.log stay open (one write per
// line, no open and close each time), and an append that fails half way is cut back to its last whole line.
// Neither is opened through a symlink or as a file of the wrong kind planted in its place (append-file.mjs):
// that is no disk to wait for, the run ends naming the file (onRefused).
import { closeSync, fstatSync, ftruncateSync, lstatSync, writeSync } from "node:fs";
import { join } from "node:path";
import { touchNotify, writeJsonAtomic } from "./store/fs-util.mjs";
import { openAppend, PlantedFileError } from "./store/append-file.mjs";
import { writeReceipt } from "./life/inbox.mjs";

/** Events that wait for space in memory at most; later ones are counted and dropped. */
export const PENDING_EVENT_BYTES = 1024 * 1024;
const PENDING_RECEIPTS = 500;
/** Errors that say the disk (not the data) is the problem. */
const DISK_ERRORS = ["ENOSPC", "EDQUOT", "EFBIG", "EIO", "EROFS"];

/** An append-only file kept open; each append is whole or, after a failure, cut back. */
class AppendFile {
	/** @param {string} path */
	constructor(path) {
		this.path = path;
		/** @type {number | undefined} */
		this.fd = undefined;
		this.size = 0;
	}

	/** Opens it now (once). */
	open() {
		if (this.fd !== undefined) return this.fd;
		this.fd = openAppend(this.path);
		this.size = fstatSync(this.fd).size;
		return this.fd;
	}

	/** @param {string} text */
	append(text) {
		const fd = this.open();
		const bytes = Buffer.from(text);
		let done = 0;
		try {
			while (done < bytes.length) done += writeSync(fd, bytes, done);
		} catch (error) {
			// A torn line would make every later line unreadable: back to the last whole one.
			if (done > 0) {
				try {
					ftruncateSync(fd, this.size);
				} catch {
					// The reader skips a torn last line.
				}
			}
			throw error;
		}
		this.size += bytes.length;
	}

	close() {
		if (this.fd !== undefined) closeSync(this.fd);
		this.fd = undefined;
	}
}

/** "dev:ino" of a directory (not followed through a symlink), or undefined. @param {string} dir */
function dirIdOf(dir) {
	try {
		const stat = lstatSync(dir);
		return stat.isDirectory() ? `${stat.dev}:${stat.ino}` : undefined;
	} catch {
		return undefined;
	}
}

/** @param {unknown} error */
function errnoOf(error) {
	const code = /** @type {NodeJS.ErrnoException} */ (error)?.code;
	return typeof code === "string" ? code : undefined;
}

/** An error that says the disk is full or failing. @param {unknown} error */
export function isDiskError(error) {
	const code = errnoOf(error);
	return code !== undefined && DISK_ERRORS.includes(code);
}

export class RunFiles {
	/** @param {{ runDir: string, storeDir: string, rowId: string }} run @param {(problem: string) => void} [onRefused] a file planted in place of one of the run's */
	constructor(run, onRefused) {
		this.run = run;
		this.onRefused = onRefused;
		/** Why a file of the run was refused ("events.jsonl: is a symbolic link (not followed)"): nothing more goes to it. @type {string | undefined} */
		this.refused = undefined;
		this.statusPath = join(run.runDir, "status.json");
		this.events = new AppendFile(join(run.runDir, "events.jsonl"));
		this.stderr = new AppendFile(join(run.runDir, "stderr.log"));
		/** The last write that failed, "<path>: ENOSPC (...)"; undefined once writes work again. @type {string | undefined} */
		this.problem = undefined;
		/** Whether that failure was the disk's (full, quota, I/O). */
		this.diskFull = false;
		/** Whether the disk failed at any time during the run. */
		this.diskFailed = false;
		this.droppedEvents = 0;
		this.droppedStderrBytes = 0;
		/** @type {string[]} */
		this.pendingEvents = [];
		this.pendingBytes = 0;
		/** @type {import("../src/board/engine/types.ts").Receipt[]} */
		this.pendingReceipts = [];
		/** @type {Map<string, unknown>} */
		this.pendingRecords = new Map();
		/** The run dir as it was at the start (a dir deleted, or replaced by another, is not ours). */
		this.dirId = dirIdOf(run.runDir);
	}

	/**
	 * Whether the run's directory is gone (deleted, or another in its place): then nothing of the run can be
	 * recorded, and a runner that goes on would run for nobody. Checked on every failed write and each second.
	 */
	dirGone() {
		const now = dirIdOf(this.run.runDir);
		return !now || (this.dirId !== undefined && now !== this.dirId);
	}

	/** Runner diagnostics go to its stderr (runner.log, on the same disk): a failed write there is dropped. @param {string} text */
	log(text) {
		try {
			process.stderr.write(`agent-board runner: ${text}\n`);
		} catch {
			// Nowhere left to say it.
		}
	}

	/**
	 * Opens events.jsonl and stderr.log before the worker starts: returns why one was refused (planted),
	 * or undefined (a failing disk is not a refusal: their lines wait for space as ever).
	 */
	openAll() {
		for (const file of [this.events, this.stderr]) {
			try {
				file.open();
			} catch (error) {
				this.failed(file.path, error);
			}
		}
		return this.refused;
	}

	/** @param {string} path @param {unknown} error */
	failed(path, error) {
		if (error instanceof PlantedFileError) {
			if (this.refused === undefined) {
				this.refused = error.message;
				this.log(`refusing ${path}: ${error.message}`);
				this.onRefused?.(error.message);
			}
			return;
		}
		const code = errnoOf(error);
		const first = this.problem === undefined;
		this.problem = `${path}: ${code ?? (error instanceof Error ? error.message : String(error))}`;
		this.diskFull = isDiskError(error);
		if (this.diskFull) this.diskFailed = true;
		if (first) this.log(`cannot write ${this.problem}; the run goes on and writes it when it can`);
	}

	/**
	 * status.json; on success everything that waited goes out too. Returns whether it was written.
	 * @param {import("../src/board/engine/types.ts").RunStatus} status
	 */
	writeStatus(status) {
		try {
			writeJsonAtomic(this.statusPath, status);
		} catch (error) {
			this.failed(this.statusPath, error);
			return false;
		}
		if (this.problem !== undefined) this.log(`writes work again after: ${this.problem}`);
		this.problem = undefined;
		this.diskFull = false;
		this.flushPending();
		touchNotify(this.run.storeDir, this.run.rowId);
		return true;
	}

	/**
	 * One line of events.jsonl ("\n" included), in order after any that wait; those are tried again with
	 * the next status write that succeeds (at most every second while the disk is full), not per event.
	 * @param {string} line
	 */
	appendEvent(line) {
		if (this.pendingEvents.length === 0) {
			try {
				this.events.append(line);
				return;
			} catch (error) {
				this.failed(this.events.path, error);
				// Never written through what was planted, nor kept for it.
				if (error instanceof PlantedFileError) return;
			}
		}
		if (this.pendingBytes + line.length > PENDING_EVENT_BYTES) this.droppedEvents += 1;
		else {
			this.pendingEvents.push(line);
			this.pendingBytes += line.length;
		}
	}

	/** @param {string} text */
	appendStderr(text) {
		try {
			this.stderr.append(text);
		} catch (error) {
			this.failed(this.stderr.path, error);
			this.droppedStderrBytes += Buffer.byteLength(text);
		}
	}

	/** @param {import("../src/board/engine/types.ts").Receipt} receipt */
	writeReceipt(receipt) {
		try {
			writeReceipt(this.run.runDir, receipt);
		} catch (error) {
			this.failed(join(this.run.runDir, "receipts"), error);
			// The status carries the latest receipts too; only the oldest waiting files are ever given up.
			if (this.pendingReceipts.push(receipt) > PENDING_RECEIPTS) this.pendingReceipts.shift();
		}
	}

	/** runner.json / worker.json: written now, or with the next write that succeeds. @param {string} path @param {unknown} value */
	writeRecord(path, value) {
		try {
			writeJsonAtomic(path, value);
		} catch (error) {
			this.failed(path, error);
			this.pendingRecords.set(path, value);
		}
	}

	flushEvents() {
		try {
			this.events.append(this.pendingEvents.join(""));
		} catch (error) {
			this.failed(this.events.path, error);
			if (!(error instanceof PlantedFileError)) return;
		}
		this.pendingEvents = [];
		this.pendingBytes = 0;
	}

	flushPending() {
		if (this.pendingEvents.length > 0) this.flushEvents();
		for (const [path, value] of [...this.pendingRecords]) {
			this.pendingRecords.delete(path);
			this.writeRecord(path, value);
		}
		const receipts = this.pendingReceipts;
		this.pendingReceipts = [];
		for (const receipt of receipts) this.writeReceipt(receipt);
	}

	close() {
		this.events.close();
		this.stderr.close();
	}
}
