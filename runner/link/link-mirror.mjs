// The local run dir of a target run, as its link keeps it: the one local writer of status.json,
// events.jsonl, receipts/ and the row's session file while the run is elsewhere. What comes from the
// target is untrusted: a status is written only when its shape is right and it names this run, an
// event line only when it is an object with the seq the frame says, session bytes only at the offset
// the local file has reached. Everything is written by temp + rename, or appended.
import { closeSync, fstatSync, ftruncateSync, openSync, readFileSync, writeSync, constants } from "node:fs";
import { join } from "node:path";
import { appendNoFollow } from "../store/append-file.mjs";
import { FILE_MODE, touchNotify, writeJsonAtomic } from "../store/fs-util.mjs";
import { writeReceipt } from "../life/inbox.mjs";
import { REASON_CODES } from "../life/reasons.mjs";
import { stoppedEnd } from "../life/run-end.mjs";
import { endFromOutside, finalize, isKind, statusError, summarize } from "../life/state-rules.mjs";
import { DELIVERY_KINDS, RECEIPT_STATUSES } from "../life/vocabulary.mjs";
import { MAX_SESSION_BYTES, sizeWords } from "../far/session-travel.mjs";
import { WordsWriter } from "../live-words.mjs";

/** @typedef {import("../life/state-rules.mjs").RunStatus} RunStatus */
/** @typedef {import("../life/reasons.mjs").ReasonCode} ReasonCode */
/** @typedef {{ code: ReasonCode, file: string, reason: string, count?: number }} MirrorFlag */

/** @param {string} code @returns {ReasonCode} */
const reasonCode = (code) =>
	/** @type {ReasonCode} */ (REASON_CODES.some((known) => known === code) ? code : "mirror-incomplete");

/** @param {unknown} value */
function receiptOk(value) {
	const r = /** @type {Record<string, unknown>} */ (value);
	return (
		isKind(value, "object") &&
		typeof r.id === "string" &&
		RECEIPT_STATUSES.some((s) => s === r.status) &&
		typeof r.at === "number" &&
		typeof r.preview === "string" &&
		(r.as === undefined || DELIVERY_KINDS.some((k) => k === r.as)) &&
		(r.reason === undefined || typeof r.reason === "string")
	);
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
 * The far status replaces the local one at each frame, except for what the link itself keeps: the
 * supervisor's note (the link decides the run's questions, link-supervisor.mjs), which no far status
 * carries or overwrites.
 * @param {RunStatus} far @param {RunStatus} local
 * @returns {RunStatus}
 */
function withLocal(far, local) {
	const next = { ...far };
	delete next.supervisor;
	if (local.supervisor) next.supervisor = local.supervisor;
	return next;
}

/**
 * @param {{ storeDir: string, rowId: string, runId: string, runDir: string, sessionFile: string, target: string, status: RunStatus, worktree?: string, onWrite?: (status: RunStatus) => void }} options
 */
export function openMirror(options) {
	const { storeDir, rowId, runId, runDir, sessionFile, target } = options;
	const paths = { status: join(runDir, "status.json"), events: join(runDir, "events.jsonl") };
	/** What the target holds that this copy could not take (kept across links: they are in the status). @type {MirrorFlag[]} */
	const flags = [...(options.status.link?.flags ?? [])];
	/** @type {{ unreachableSince?: number, reason?: string }} */
	let reach = {};
	/** A stop waits for the target: the row says so until the far status does. */
	let stopAsked = options.status.stopRequested === true;
	/** Events the far runner itself dropped (its disk was full): the count this copy adds its own to. */
	let farDropped = 0;
	const linkState = () => ({ target, ...reach, ...(flags.length ? { flags } : {}) });
	/** @type {RunStatus} */
	let status = { ...options.status, link: linkState() };
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
		status.link = linkState();
		// Lines the target's events.jsonl had that this copy skipped count as dropped events, as a runner's do.
		const skipped = flags.reduce((n, f) => n + (f.count ?? 0), 0);
		if (skipped > 0) status.droppedEvents = farDropped + skipped;
		status.updatedAt = Math.max(status.updatedAt, Date.now());
		writeJsonAtomic(paths.status, status);
		touchNotify(storeDir, rowId);
		options.onWrite?.(status);
	}

	/** The local session file's size (0 without one). */
	function sessionBytes() {
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
	}

	/** @param {MirrorFlag} flag @returns {boolean} whether it is new */
	function addFlag(flag) {
		const at = flags.findIndex((f) => f.code === flag.code && f.file === flag.file);
		if (at >= 0 && flags[at]?.reason === flag.reason) return false;
		if (at >= 0) flags[at] = flag;
		else flags.push(flag);
		return true;
	}

	/**
	 * What this copy lacks of what the target held at the end (`held`: its last event seq and session size),
	 * and every flag: [] when the copy is whole.
	 * @param {{ seq: number, sessionBytes: number } | undefined} held
	 * @returns {MirrorFlag[]}
	 */
	function missing(held) {
		const out = [...flags];
		if (held && held.seq > lastSeq)
			out.push({
				code: "mirror-incomplete",
				file: paths.events,
				reason: `events.jsonl: events ${lastSeq + 1}-${held.seq} held on ${target} never arrived`,
			});
		const local = sessionBytes();
		if (held && held.sessionBytes !== local && !flags.some((f) => f.file.endsWith(`${rowId}.jsonl`)))
			out.push({
				code: "mirror-incomplete",
				file: sessionFile,
				reason: `session: ${local} of the ${held.sessionBytes} bytes on ${target} arrived`,
			});
		return out;
	}

	// The far runner's streamed words, as they come: this copy's words.jsonl (runner/live-words.mjs).
	const words = new WordsWriter({ runDir, storeDir, rowId });

	return {
		get lastSeq() {
			return lastSeq;
		},
		/**
		 * Lines of the far run's words.jsonl (untrusted: each is checked for shape); `fresh`: its end read afresh.
		 * @param {string} text @param {boolean} fresh
		 */
		words(text, fresh) {
			words.relay(text, fresh);
		},
		sessionBytes,
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
			if (typeof (/** @type {RunStatus} */ (far).endedAt) === "number") return undefined;
			status = withLocal(/** @type {RunStatus} */ (far), status);
			farDropped = status.droppedEvents ?? 0;
			if (stopAsked && !status.stopRequested) {
				status.stopRequested = true;
				status.summary = summarize(status);
			}
			write();
			return undefined;
		},
		/** The link changed a field of its own (the supervisor's note): written now. */
		changed() {
			write();
		},
		/**
		 * A line of the link's own in events.jsonl (the supervisor's decision). It carries the last far
		 * seq, never a new one: the far runner numbers the lines, and a follow resumes after its last.
		 * @param {Record<string, unknown>} event
		 */
		localEvent(event) {
			const line = JSON.stringify({ ...event, seq: Math.max(lastSeq, 1), at: Date.now(), type: String(event.type) });
			appendNoFollow(paths.events, `${tornTail ? "\n" : ""}${line}\n`);
			tornTail = false;
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
			if (!isKind(value, "object") || e.seq !== seq || typeof e.at !== "number" || typeof e.type !== "string")
				return `event ${seq} has the wrong shape`;
			// Never through a symlink planted as the mirror's events.jsonl.
			appendNoFollow(paths.events, `${tornTail ? "\n" : ""}${line}\n`);
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
			// A target that sends more than a session may be (its copy is checked there too) is not followed.
			if (offset + bytes.length > MAX_SESSION_BYTES) {
				if (
					addFlag({
						code: "mirror-incomplete",
						file: sessionFile,
						reason: `session: ${target} sent past ${sizeWords(MAX_SESSION_BYTES)}, the most a session may be: not mirrored beyond it`,
					})
				)
					write();
				return true;
			}
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
			reach = { unreachableSince: reach.unreachableSince ?? since, reason };
			write();
		},
		reachable() {
			if (reach.unreachableSince === undefined) return;
			reach = {};
			write();
		},
		/**
		 * The run ended there and its work cannot come back here for a full disk: the row waits for space
		 * (still working: its end is written after the fetch-back), in the words a local run's wait uses.
		 * @param {boolean} waiting
		 */
		waitingForSpace(waiting) {
			status.summary = waiting ? "Disk full: waiting for space to bring the work back" : summarize(status);
			write();
		},
		/** The stop waits for the target: the row says so until the far status does. */
		stopRequested() {
			stopAsked = true;
			if (status.stopRequested) return;
			status.stopRequested = true;
			status.summary = summarize(status);
			write();
		},
		/**
		 * Something at the target this copy cannot take (the far side's flag frame): kept in the status, and
		 * the end fails with it.
		 * @param {{ code: string, file: string, reason: string, count?: number }} flag
		 */
		flag(flag) {
			if (
				addFlag({
					code: reasonCode(flag.code),
					file: flag.file,
					reason: flag.reason,
					...(flag.count ? { count: flag.count } : {}),
				})
			)
				write();
		},
		/**
		 * The end, after the last fetch-back: the target's final status, unless this copy is not whole (an
		 * event or session bytes missing, a flag) or the work did not come back: then the run failed, with
		 * the code and what is missing (never a completion this machine did not get).
		 * @param {unknown} far the target's final status
		 * @param {{ held?: { seq: number, sessionBytes: number }, notFetched?: string }} [check]
		 * @returns {RunStatus}
		 */
		end(far, check = {}) {
			const error = statusError(far, { runId, rowId });
			const final = /** @type {RunStatus} */ (far);
			reach = {};
			if (error || typeof final.endedAt !== "number") {
				finalize(status, {
					code: null,
					signal: null,
					spawnError: `${target} ended the run with a status that cannot be used: ${error ?? "/endedAt missing"}`,
					now: Date.now(),
				});
				write();
				return status;
			}
			status = withLocal(final, status);
			farDropped = status.droppedEvents ?? 0;
			const problems = [
				...missing(check.held),
				...(check.notFetched
					? [
							{
								code: /** @type {ReasonCode} */ ("work-not-fetched"),
								file: options.worktree ?? runDir,
								reason: `work not fetched: ${check.notFetched}`,
							},
						]
					: []),
			];
			if (problems.length > 0) {
				const there = `${final.state} on ${target}${final.state === "failed" && final.error ? `: ${final.error}` : ""}`;
				status.state = "failed";
				status.errorCode = problems.find((p) => p.code === "work-not-fetched")?.code ?? problems[0]?.code;
				status.error = `${problems.map((p) => p.reason).join("; ")} (the run ended ${there})`;
				status.summary = summarize(status);
			}
			write();
			return status;
		},
		/**
		 * The run ended here without a final status from the target: it never started there, or its files
		 * there are gone. @param {string} reason @param {ReasonCode} [code]
		 */
		fail(reason, code) {
			finalize(status, { code: null, signal: null, spawnError: reason, now: Date.now() });
			if (code) status.errorCode = code;
			reach = {};
			write();
		},
		/** Stopped before it started at the target. */
		stopped() {
			endFromOutside(status, stoppedEnd(), Date.now());
			reach = {};
			write();
		},
	};
}
