// The runner <-> worker control channel (fd 3 of the worker, a socketpair): JSON lines, one object per
// line (runner/lines.mjs splits them). Plain .mjs so the runner can import it; the worker role imports it too.
import { isReceiptCode } from "./life/reasons.mjs";
import { DELIVER_AS, DELIVERY_KINDS, RECEIPT_STATUSES } from "./life/vocabulary.mjs";

/** @typedef {(typeof DELIVER_AS)[number]} DeliverAs */
/** @typedef {(typeof DELIVERY_KINDS)[number]} DeliveryKind */

/** @template {string} T @param {readonly T[]} words @param {unknown} value @returns {value is T} */
export function isOneOf(words, value) {
	return words.some((word) => word === value);
}

/**
 * The worker's only argv message. Its `input` handler swaps it (the whole text, nothing else) for the
 * prompt from the channel. Whether that happened is never judged from message text, which a prompt may
 * quote: the worker role says `ready` first and the runner sends the prompt only then, so a user
 * message before `ready` can only be this placeholder, read by a pi without the worker role.
 */
export const PROMPT_PLACEHOLDER = "[agent-board: prompt arrives on the control channel]";

/** Env var naming the worker's control fd ("3"). Absent: no channel. */
export const CONTROL_FD_ENV = "AGENT_BOARD_CONTROL_FD";

/** Env var: seconds an ask_user call waits in place before the run parks (default 600). */
export const ASK_WAIT_ENV = "AGENT_BOARD_ASK_WAIT";
export const DEFAULT_ASK_WAIT_SECONDS = 600;

/**
 * @typedef {{ type: "prompt", text: string }
 *   | { type: "message", id: string, text: string, deliverAs: DeliverAs }
 *   | { type: "abort" }} RunnerToWorker
 */

/** A line the worker could not use; with an id it still gets a rejected receipt, so no sender waits forever.
 * @typedef {{ type: "invalid", id?: string }} InvalidLine
 */

/**
 * A rejection carries its code; the runner puts the words for people in the receipt.
 * @typedef {{ type: "receipt", id: string, status: (typeof RECEIPT_STATUSES)[number], as?: DeliveryKind, code?: import("./life/reasons.mjs").ReceiptCode }
 *   | { type: "ready" }
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
	if (record.type === "prompt" && typeof record.text === "string") return { type: "prompt", text: record.text };
	if (record.type === "abort") return { type: "abort" };
	if (
		record.type === "message" &&
		typeof record.id === "string" &&
		record.id.length > 0 &&
		typeof record.text === "string" &&
		isOneOf(DELIVER_AS, record.deliverAs)
	) {
		return { type: "message", id: record.id, text: record.text, deliverAs: record.deliverAs };
	}
	return typeof record.id === "string" && record.id.length > 0 ? { type: "invalid", id: record.id } : { type: "invalid" };
}

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
	if (record.type === "closed") return { type: "closed" };
	if (record.type === "ready") return { type: "ready" };
	if (record.type !== "receipt" || typeof record.id !== "string") return undefined;
	if (!isOneOf(RECEIPT_STATUSES, record.status)) return undefined;
	/** @type {WorkerToRunner} */
	const receipt = { type: "receipt", id: record.id, status: record.status };
	if (isOneOf(DELIVERY_KINDS, record.as)) receipt.as = record.as;
	if (isReceiptCode(record.code)) receipt.code = record.code;
	return receipt;
}

/** The worker's end of the channel is this fd (the runner spawns it as the 4th stdio entry). */
export const CONTROL_FD = 3;
