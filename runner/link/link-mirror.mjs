// The local run dir of a target run, as its link keeps it: the one local writer of status.json,
// events.jsonl, receipts/ and the row's session file while the run is elsewhere. What comes from the
// target is untrusted: a status is written only when its shape is right and it names this run, an
// event line only when it is an object with the seq the frame says, session bytes only at the offset
// the local file has reached. Everything is written by temp + rename, or appended.
import { closeSync, fstatSync, ftruncateSync, openSync, readFileSync, writeSync, appendFileSync, constants } from "node:fs";
import { join } from "node:path";
import { FILE_MODE, touchNotify, writeJsonAtomic } from "../store/fs-util.mjs";
import { writeReceipt } from "../life/inbox.mjs";
import { stoppedEnd } from "../life/run-end.mjs";
import { endFromOutside, finalize, isKind, statusError } from "../life/state-rules.mjs";
import { DELIVERY_KINDS, RECEIPT_STATUSES } from "../life/vocabulary.mjs";

/** @typedef {import("../life/state-rules.mjs").RunStatus} RunStatus */

/** @param {unknown} value */
function receiptOk(value) {
	const r = /** @type {Record<string, unknown>} */ (value);
	return isKind(value, "object") && typeof r.id === "string" && RECEIPT_STATUSES.some((s) => s === r.status) && typeof r.at === "number" && typeof r.preview === "string" && (r.as === undefined || DELIVERY_KINDS.some((k) => k === r.as)) && (r.reason === undefined || typeof r.reason === "string");
}

/** The last event seq in a local events.jsonl (0 without one). @param {string} path */
function lastSeqOf(path) {
	let text = "";
	try {
		text = readFileSync(path, "utf8");
	} catch {
		return 0;
	}
	const lines = text.split("\n").filter(Boolean);
	for (let i = lines.length - 1; i >= 0; i--) {
		try {
			const seq = JSON.parse(lines[i] ?? "").seq;
			if (Number.isSafeInteger(seq)) return seq;
		} catch {
			// A torn last line (the link died mid-append) is skipped; the target sends it again.
		}
	}
	return 0;
}

/**
 * @param {{ storeDir: string, rowId: string, runId: string, runDir: string, sessionFile: string, target: string, status: RunStatus }} options
 */
export function openMirror(options) {
	const { storeDir, rowId, runId, runDir, sessionFile, target } = options;
	const paths = { status: join(runDir, "status.json"), events: join(runDir, "events.jsonl") };
	/** @type {RunStatus & { link?: { target: string, unreachableSince?: number, reason?: string } }} */
	let status = { ...options.status, link: { target } };
	let lastSeq = lastSeqOf(paths.events);
	// A torn last line stays; the next append starts on a line of its own.
	let tornTail = false;
	try {
		const text = readFileSync(paths.events, "utf8");
		tornTail = text.length > 0 && !text.endsWith("\n");
	} catch {
		// No events yet.
	}

	function write() {
		status.updatedAt = Math.max(status.updatedAt, Date.now());
		writeJsonAtomic(paths.status, status);
		touchNotify(storeDir, rowId);
	}

	return {
		get lastSeq() {
			return lastSeq;
		},
		sessionBytes() {
			try {
				const fd = openSync(sessionFile, constants.O_RDONLY | constants.O_NOFOLLOW);
				try {
					return fstatSync(fd).size;
				} finally {
					closeSync(fd);
				}
			} catch {
				return 0;
			}
		},
		status: () => status,
		/** The link has the run now: working, on its way to the target. */
		begin() {
			if (status.state === "queued") {
				status.state = "working";
				status.startedAt = Date.now();
				status.summary = `Starting on ${target}`;
			}
			write();
		},
		/** @param {unknown} far @returns {string | undefined} why it was not mirrored */
		setStatus(far) {
			const error = statusError(far, { runId, rowId });
			if (error) return `${target} sent a status that cannot be used: ${error}`;
			// The end is written by end(), after the code is back: readers take a terminal status as done.
			if (typeof (/** @type {RunStatus} */ (far)).endedAt === "number") return undefined;
			status = { .../** @type {RunStatus} */ (far), link: { target } };
			write();
			return undefined;
		},
		/** @param {number} seq @param {string} line @returns {string | undefined} why it was dropped */
		event(seq, line) {
			if (seq <= lastSeq) return undefined;
			/** @type {unknown} */
			let value;
			try {
				value = JSON.parse(line);
			} catch {
				return `event ${seq} is not JSON`;
			}
			const e = /** @type {Record<string, unknown>} */ (value);
			if (!isKind(value, "object") || e.seq !== seq || typeof e.at !== "number" || typeof e.type !== "string") return `event ${seq} has the wrong shape`;
			appendFileSync(paths.events, `${tornTail ? "\n" : ""}${line}\n`, { mode: FILE_MODE });
			tornTail = false;
			lastSeq = seq;
			return undefined;
		},
		/**
		 * Session bytes at `offset`; returns false on a gap (the link then follows again from its size).
		 * @param {number} offset @param {string} data base64 @param {boolean} [reset] pi rewrote the file: it starts over
		 */
		session(offset, data, reset = false) {
			const bytes = Buffer.from(data, "base64");
			const fd = openSync(sessionFile, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, FILE_MODE);
			try {
				if (reset && offset === 0) ftruncateSync(fd, 0);
				const size = fstatSync(fd).size;
				if (offset > size) return false;
				const skip = size - offset;
				if (skip < bytes.length) writeSync(fd, bytes, skip, bytes.length - skip, size);
				return true;
			} finally {
				closeSync(fd);
			}
		},
		/** @param {unknown} receipt @returns {string | undefined} the id mirrored */
		receipt(receipt) {
			if (!receiptOk(receipt)) return undefined;
			const r = /** @type {import("../life/inbox.mjs").Receipt} */ (receipt);
			writeReceipt(runDir, r);
			return r.id;
		},
		/** @param {string} reason @param {number} since */
		unreachable(reason, since) {
			status.link = { target, unreachableSince: status.link?.unreachableSince ?? since, reason };
			write();
		},
		reachable() {
			if (status.link?.unreachableSince === undefined) return;
			status.link = { target };
			write();
		},
		/** The stop waits for the target: the row says so. */
		stopRequested() {
			if (status.stopRequested) return;
			status.stopRequested = true;
			write();
		},
		/** @param {unknown} far the target's final status @returns {RunStatus} */
		end(far) {
			const error = statusError(far, { runId, rowId });
			const final = /** @type {RunStatus} */ (far);
			if (error || typeof final.endedAt !== "number") {
				finalize(status, { code: null, signal: null, spawnError: `${target} ended the run with a status that cannot be used: ${error ?? "/endedAt missing"}`, now: Date.now() });
			} else status = { ...final, link: { target } };
			write();
			return status;
		},
		/** The run never started at the target. @param {string} reason */
		fail(reason) {
			finalize(status, { code: null, signal: null, spawnError: reason, now: Date.now() });
			status.link = { target };
			write();
		},
		/** Stopped before it started at the target. */
		stopped() {
			endFromOutside(status, stoppedEnd(), Date.now());
			write();
		},
	};
}
