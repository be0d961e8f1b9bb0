// Frames between the link (the local owner of a run that runs elsewhere) and host-agent.mjs at the
// target: JSON lines both ways over one ssh channel (or a local pipe), split on "\n" only. Whatever
// comes from a target is untrusted: a frame is used only when its shape is right, and one line may
// not grow without bound.
import { LineSplitter } from "../lines.mjs";

/** A line longer than this is dropped (a session chunk is at most 256 KiB before base64). */
export const MAX_FRAME_BYTES = 4 * 1024 * 1024;
/** Session bytes travel in chunks of at most this many bytes. */
export const SESSION_CHUNK_BYTES = 256 * 1024;

/** An event line longer than this is skipped and counted (the runner's lines are far smaller: compact-event.mjs clips). */
export const MAX_EVENT_LINE_BYTES = 1024 * 1024;

/**
 * host -> link: hello, status, event, words (whole lines of the run's words.jsonl; `fresh`: its end read
 * afresh, not what followed the last), receipt, session, git, end (`held`: the last event seq and the
 * session's size there, which the link's copy must match), error (`code`: a reason code of
 * life/reasons.mjs when the far side knows why), flag (something there the link's copy cannot take: a
 * line over its limit, a file over its size, a file naming what it must not; `file` names it), result
 * (one-shot verbs).
 * link -> host: inbox (follow), config / session / done (prepare).
 * On the one channel a target's link keeps (host-agent `link`, far-mux.mjs) every frame about a run
 * carries its id in `run`: link -> host follow, launch, session, done, inbox, stop, unfollow; host ->
 * link the run's stream as above, and `close` when the host cannot go on with a run (launch failed
 * there, its follow could not start, kind "gone": its files there are gone; `code` as error's); `stat`
 * (the host's load) is the channel's own.
 * @typedef {({ t: "hello", agent: string, pid: number, load?: number, cpus?: number }
 *   | { t: "stat", load: number, cpus: number, at: number }
 *   | { t: "follow", row: string, seq: number, bytes: number }
 *   | { t: "launch", config: Record<string, unknown> }
 *   | { t: "stop", row: string }
 *   | { t: "unfollow" }
 *   | { t: "close", kind: string, message: string, code?: string }
 *   | { t: "status", status: Record<string, unknown> }
 *   | { t: "event", seq: number, line: string }
 *   | { t: "words", text: string, fresh?: boolean }
 *   | { t: "receipt", receipt: Record<string, unknown> }
 *   | { t: "session", offset: number, data: string, reset?: boolean }
 *   | { t: "git", head: string, wip: string }
 *   | { t: "end", status: Record<string, unknown>, held?: { seq: number, sessionBytes: number } }
 *   | { t: "error", message: string, code?: string }
 *   | { t: "flag", code: string, file: string, reason: string, count?: number }
 *   | { t: "result", value: Record<string, unknown> }
 *   | { t: "inbox", message: Record<string, unknown> }
 *   | { t: "config", config: Record<string, unknown> }
 *   | { t: "done" }) & { run?: string }} Frame
 */

/** @param {unknown} value @returns {value is Record<string, unknown>} */
function isObject(value) {
	return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** @param {unknown} value */
const isCount = (value) => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
/** @param {unknown} value */
const isSha = (value) => typeof value === "string" && /^[0-9a-f]{40,64}$/.test(value);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** @param {unknown} value */
const isCode = (value) => typeof value === "string" && /^[a-z][a-z-]{0,39}$/.test(value);

/** A run id as it may travel in `run` (the store's id pattern). @param {unknown} value */
const isRunId = (value) => typeof value === "string" && /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(value);
/** @param {unknown} value */
const isLoad = (value) => typeof value === "number" && Number.isFinite(value) && value >= 0;

/** @param {Frame} frame */
export function encodeFrame(frame) {
	return `${JSON.stringify(frame)}\n`;
}

/**
 * One line -> a well-formed frame, or undefined.
 * @param {string} line
 * @returns {Frame | undefined}
 */
export function parseFrame(line) {
	if (line.length > MAX_FRAME_BYTES) return undefined;
	/** @type {unknown} */
	let value;
	try {
		value = JSON.parse(line.endsWith("\r") ? line.slice(0, -1) : line);
	} catch {
		return undefined;
	}
	if (!isObject(value)) return undefined;
	if (value.run !== undefined && !isRunId(value.run)) return undefined;
	const frame = frameBody(value);
	return frame && value.run !== undefined ? { ...frame, run: /** @type {string} */ (value.run) } : frame;
}

/** @param {Record<string, unknown>} f @returns {Frame | undefined} */
function frameBody(f) {
	switch (f.t) {
		case "hello": {
			if (typeof f.agent !== "string" || !isCount(f.pid)) return undefined;
			const load =
				isLoad(f.load) && isCount(f.cpus)
					? { load: /** @type {number} */ (f.load), cpus: /** @type {number} */ (f.cpus) }
					: {};
			return { t: "hello", agent: f.agent, pid: /** @type {number} */ (f.pid), ...load };
		}
		case "stat":
			return isLoad(f.load) && isCount(f.cpus) && isCount(f.at)
				? {
						t: "stat",
						load: /** @type {number} */ (f.load),
						cpus: /** @type {number} */ (f.cpus),
						at: /** @type {number} */ (f.at),
					}
				: undefined;
		case "follow":
			return isRunId(f.row) && isCount(f.seq) && isCount(f.bytes)
				? {
						t: "follow",
						row: /** @type {string} */ (f.row),
						seq: /** @type {number} */ (f.seq),
						bytes: /** @type {number} */ (f.bytes),
					}
				: undefined;
		case "launch":
			return isObject(f.config) ? { t: "launch", config: f.config } : undefined;
		case "stop":
			return isRunId(f.row) ? { t: "stop", row: /** @type {string} */ (f.row) } : undefined;
		case "unfollow":
			return { t: "unfollow" };
		case "close":
			if (typeof f.kind !== "string" || typeof f.message !== "string") return undefined;
			return {
				t: "close",
				kind: f.kind,
				message: f.message,
				...(isCode(f.code) ? { code: /** @type {string} */ (f.code) } : {}),
			};
		case "status":
			return isObject(f.status) ? { t: f.t, status: f.status } : undefined;
		case "end": {
			if (!isObject(f.status)) return undefined;
			const held =
				isObject(f.held) && isCount(f.held.seq) && isCount(f.held.sessionBytes)
					? { seq: /** @type {number} */ (f.held.seq), sessionBytes: /** @type {number} */ (f.held.sessionBytes) }
					: undefined;
			return { t: "end", status: f.status, ...(held ? { held } : {}) };
		}
		case "event":
			return isCount(f.seq) && typeof f.line === "string" && !f.line.includes("\n")
				? { t: "event", seq: /** @type {number} */ (f.seq), line: f.line }
				: undefined;
		case "words":
			return typeof f.text === "string"
				? { t: "words", text: f.text, ...(f.fresh === true ? { fresh: true } : {}) }
				: undefined;
		case "receipt":
			return isObject(f.receipt) && typeof f.receipt.id === "string"
				? { t: "receipt", receipt: f.receipt }
				: undefined;
		case "session":
			if (!isCount(f.offset) || typeof f.data !== "string" || !BASE64.test(f.data)) return undefined;
			return {
				t: "session",
				offset: /** @type {number} */ (f.offset),
				data: f.data,
				...(f.reset === true ? { reset: true } : {}),
			};
		case "git":
			return isSha(f.head) && isSha(f.wip)
				? { t: "git", head: /** @type {string} */ (f.head), wip: /** @type {string} */ (f.wip) }
				: undefined;
		case "error":
			if (typeof f.message !== "string") return undefined;
			return { t: "error", message: f.message, ...(isCode(f.code) ? { code: /** @type {string} */ (f.code) } : {}) };
		case "flag":
			if (!isCode(f.code) || typeof f.file !== "string" || typeof f.reason !== "string") return undefined;
			return {
				t: "flag",
				code: /** @type {string} */ (f.code),
				file: f.file,
				reason: f.reason,
				...(isCount(f.count) ? { count: /** @type {number} */ (f.count) } : {}),
			};
		case "result":
			return isObject(f.value) ? { t: "result", value: f.value } : undefined;
		case "inbox":
			return isObject(f.message) && typeof f.message.id === "string"
				? { t: "inbox", message: f.message }
				: undefined;
		case "config":
			return isObject(f.config) ? { t: "config", config: f.config } : undefined;
		case "done":
			return { t: "done" };
		default:
			return undefined;
	}
}

/**
 * Reads frames from a stream (ssh stdout, host-agent stdin). Bad lines are counted, never thrown.
 * @param {NodeJS.ReadableStream} stream
 * @param {(frame: Frame) => void} onFrame
 * @param {{ onEnd?: () => void, onBadLine?: (line: string) => void }} [options]
 */
export function readFrames(stream, onFrame, options = {}) {
	// A peer that never ends a line must not grow us without bound: such a line is dropped whole.
	const splitter = new LineSplitter({ maxLine: MAX_FRAME_BYTES });
	stream.setEncoding("utf8");
	stream.on("data", (/** @type {string} */ chunk) => {
		const dropped = splitter.dropped;
		const lines = splitter.push(chunk);
		for (let i = dropped; i < splitter.dropped; i++) options.onBadLine?.("(line too long)");
		for (const line of lines) {
			const frame = parseFrame(line);
			if (frame) onFrame(frame);
			else options.onBadLine?.(line);
		}
	});
	stream.on("end", () => options.onEnd?.());
	stream.on("error", () => options.onEnd?.());
}

/** A message id that is safe as a file name in inbox/, claimed/ and receipts/. @param {unknown} id */
export function safeMessageId(id) {
	return typeof id === "string" && /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/.test(id);
}
