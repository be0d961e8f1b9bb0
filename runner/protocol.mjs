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

/** Who decided a supervisor's answer, at most this long (a rule's file:line). */
export const MAX_BY_CHARS = 300;

/**
 * `prompt` may ask the worker to hold each turn's end for a `go` (budgets) and carry extra system
 * text (a preset's); a `message` with `answers` is an answer to that ask_user call only (the supervisor's:
 * rejected "answered" when that question is no longer waiting).
 * @typedef {{ type: "prompt", text: string, holdTurns?: boolean, system?: string }
 *   | { type: "message", id: string, text: string, deliverAs: DeliverAs, answers?: string, by?: string }
 *   | { type: "go", id: string }
 *   | { type: "abort" }} RunnerToWorker
 */

/** A line the worker could not use; with an id it still gets a rejected receipt, so no sender waits forever.
 * @typedef {{ type: "invalid", id?: string }} InvalidLine
 */

/**
 * A rejection carries its code; the runner puts the words for people in the receipt.
 * @typedef {{ type: "receipt", id: string, status: (typeof RECEIPT_STATUSES)[number], as?: DeliveryKind, code?: import("./life/reasons.mjs").ReceiptCode }
 *   | { type: "ready" }
 *   | { type: "closed" }
 *   | TurnEnd
 *   | Hold} WorkerToRunner
 */

/**
 * The worker's action gate holds a tool call for the person (src/board/worker/action-gate.ts): `hold`
 * asks, the runner shows it as the ask_user question it stands for (the same path, the same reply);
 * `hold-end` says how it ended (answered with `answer`, or not).
 * @typedef {{ type: "hold", id: string, question: string }
 *   | { type: "hold-end", id: string, answer?: string }} Hold
 */

/**
 * A turn ended and the worker holds it until `go` (only when the prompt asked): `usage` is this
 * process's spend so far, `more` whether another turn follows (tool results to send back).
 * @typedef {{ type: "turn-end", id: string, usage: { tokens: number, cost: number }, more: boolean }} TurnEnd
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
	if (record.type === "prompt" && typeof record.text === "string") {
		return {
			type: "prompt",
			text: record.text,
			...(record.holdTurns === true ? { holdTurns: true } : {}),
			...(typeof record.system === "string" && record.system ? { system: record.system } : {}),
		};
	}
	if (record.type === "abort") return { type: "abort" };
	if (record.type === "go" && typeof record.id === "string") return { type: "go", id: record.id };
	if (
		record.type === "message" &&
		typeof record.id === "string" &&
		record.id.length > 0 &&
		typeof record.text === "string" &&
		isOneOf(DELIVER_AS, record.deliverAs)
	) {
		const answers = typeof record.answers === "string" && record.answers ? { answers: record.answers } : {};
		// Who decided a supervisor's answer ("rule <file:line>", "model"): the transcript credits it.
		const by = typeof record.by === "string" && record.by ? { by: record.by.slice(0, MAX_BY_CHARS) } : {};
		return { type: "message", id: record.id, text: record.text, deliverAs: record.deliverAs, ...answers, ...by };
	}
	return typeof record.id === "string" && record.id.length > 0
		? { type: "invalid", id: record.id }
		: { type: "invalid" };
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
	if (record.type === "turn-end") return turnEndOf(record);
	if (record.type === "hold" && typeof record.id === "string" && record.id && typeof record.question === "string")
		return { type: "hold", id: record.id, question: record.question };
	if (record.type === "hold-end" && typeof record.id === "string" && record.id)
		return {
			type: "hold-end",
			id: record.id,
			...(typeof record.answer === "string" ? { answer: record.answer } : {}),
		};
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

/** @param {unknown} value */
const count = (value) => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0);

/** @param {Record<string, unknown>} record @returns {TurnEnd | undefined} */
function turnEndOf(record) {
	if (typeof record.id !== "string" || !record.id) return undefined;
	const usage = /** @type {Record<string, unknown>} */ (
		record.usage && typeof record.usage === "object" ? record.usage : {}
	);
	return {
		type: "turn-end",
		id: record.id,
		usage: { tokens: count(usage.tokens), cost: count(usage.cost) },
		more: record.more === true,
	};
}
