// The runner <-> worker control channel (fd 3 of the worker, a socketpair): JSON lines, one object per
// line, split on "\n" only (JSON.stringify escapes "\n" inside strings; U+2028/U+2029 stay raw and are
// not line ends). Plain .mjs so the runner can import it; the worker role imports it too.

/** The worker's only argv message. Its `input` handler swaps it for the prompt from the channel. */
export const PROMPT_PLACEHOLDER = "[agent-board: prompt arrives on the control channel]";

/** Env var naming the worker's control fd ("3"). Absent: no channel. */
export const CONTROL_FD_ENV = "AGENT_BOARD_CONTROL_FD";

/** Env var: seconds an ask_user call waits in place before the run parks (default 600). */
export const ASK_WAIT_ENV = "AGENT_BOARD_ASK_WAIT";
export const DEFAULT_ASK_WAIT_SECONDS = 600;

/** runner -> worker */
export const MSG_PROMPT = "prompt";
export const MSG_MESSAGE = "message";
export const MSG_ABORT = "abort";
/** worker -> runner */
export const MSG_RECEIPT = "receipt";
export const MSG_CLOSED = "closed";

/** Receipt reason when the worker accepts no more messages. */
export const REASON_RUN_ENDED = "run ended";

/**
 * @typedef {{ type: "prompt", text: string }
 *   | { type: "message", id: string, text: string, deliverAs: "steer" | "followUp" }
 *   | { type: "abort" }} RunnerToWorker
 */

/** A line the worker could not use; with an id it still gets a rejected receipt, so no sender waits forever.
 * @typedef {{ type: "invalid", id?: string }} InvalidLine
 */

/**
 * @typedef {{ type: "receipt", id: string, status: "delivered" | "rejected", as?: "steer" | "followUp" | "answer", reason?: string }
 *   | { type: "closed" }} WorkerToRunner
 */

/**
 * One line of the channel, "\n" included.
 * @param {RunnerToWorker | WorkerToRunner} message
 * @returns {string}
 */
export function encodeLine(message) {
	return `${JSON.stringify(message)}\n`;
}

/**
 * Splits decoded text (feed strings from a stream with setEncoding("utf8"), so multi-byte characters
 * are never cut) into complete lines; keeps the unterminated tail for the next chunk.
 */
export class LineSplitter {
	constructor() {
		/** @type {string} */
		this.rest = "";
	}

	/**
	 * @param {string} chunk
	 * @returns {string[]} complete lines, without their "\n"
	 */
	push(chunk) {
		const parts = (this.rest + chunk).split("\n");
		this.rest = parts.pop() ?? "";
		return parts.filter((line) => line.length > 0);
	}
}

/**
 * Parses one runner -> worker line (the channel is trusted, but a wrong line must not crash the worker).
 * @param {string} line
 * @returns {RunnerToWorker | InvalidLine}
 */
export function parseRunnerLine(line) {
	/** @type {unknown} */
	let value;
	try {
		value = JSON.parse(line);
	} catch {
		return { type: "invalid" };
	}
	if (typeof value !== "object" || value === null) return { type: "invalid" };
	const record = /** @type {Record<string, unknown>} */ (value);
	if (record.type === MSG_PROMPT && typeof record.text === "string") return { type: "prompt", text: record.text };
	if (record.type === MSG_ABORT) return { type: "abort" };
	if (
		record.type === MSG_MESSAGE &&
		typeof record.id === "string" &&
		record.id.length > 0 &&
		typeof record.text === "string" &&
		(record.deliverAs === "steer" || record.deliverAs === "followUp")
	) {
		return { type: "message", id: record.id, text: record.text, deliverAs: record.deliverAs };
	}
	return typeof record.id === "string" && record.id.length > 0 ? { type: "invalid", id: record.id } : { type: "invalid" };
}

/** Receipt reason for a message line the worker could not parse. */
export const REASON_MALFORMED = "malformed message";

/**
 * Parses one worker -> runner line; undefined for anything malformed.
 * @param {string} line
 * @returns {WorkerToRunner | undefined}
 */
export function parseWorkerLine(line) {
	/** @type {unknown} */
	let value;
	try {
		value = JSON.parse(line);
	} catch {
		return undefined;
	}
	if (typeof value !== "object" || value === null) return undefined;
	const record = /** @type {Record<string, unknown>} */ (value);
	if (record.type === MSG_CLOSED) return { type: "closed" };
	if (record.type !== MSG_RECEIPT || typeof record.id !== "string") return undefined;
	if (record.status !== "delivered" && record.status !== "rejected") return undefined;
	/** @type {WorkerToRunner} */
	const receipt = { type: "receipt", id: record.id, status: record.status };
	if (record.as === "steer" || record.as === "followUp" || record.as === "answer") receipt.as = record.as;
	if (typeof record.reason === "string") receipt.reason = record.reason;
	return receipt;
}

/** The worker's end of the channel is this fd (the runner spawns it as the 4th stdio entry). */
export const CONTROL_FD = 3;
