// Why something was refused or failed: a code for programs to branch on, words for people. Code
// compares codes only, so the words can change without changing what the board does.

/** 1 MiB: a message (reply, answer, steer) larger than this is refused before it reaches a worker. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/**
 * Every code a refusal or failure carries.
 * - run-ended: the message reached a run as it ended (reply then starts a new run)
 * - malformed / unreadable: an inbox file or channel line that is not a message
 * - too-large: a message over MAX_MESSAGE_BYTES
 * - unconfirmed: the worker exited before confirming a delivery
 * - not-started: the message waited for a queued run that was stopped or failed before it started
 * - archived, unreadable-row, not-delivered, busy: a reply or stop the row refused
 * - no-such-row, invalid: a request naming no row, or with a bad argument
 * - dispatch-failed: a dispatch that could not write its row (nothing is left behind)
 * - disk-full: the store's disk has no room: a live or queued row waits for space, a failed run failed of it
 * - start-failed, never-started, runner-died, stopped: how a run ended when its owner could not record it
 *   (run-end.mjs): it could not start; its runner never recorded itself; its runner (or link, or
 *   container) is gone; it was stopped from outside
 * - killed-outside: a signal nobody on the board sent ended it (`podman stop` or `rm -f` of its container,
 *   a SIGTERM to its runner)
 * - out-of-memory: the kernel's OOM killer ended its worker (or its container) at its memory limit
 * - far-run-gone: its files at the target are gone (its dir deleted there): nothing there can finish it
 * - mirror-incomplete: the target holds what this machine's copy could not take (an events.jsonl line or a
 *   session over its limit, lines out of order): the row names the file and the limit
 * - far-tampered: a file at the target names what the run's own layout does not (run.json's /cwd)
 * - session-too-large: a session over MAX_SESSION_BYTES (far/session-travel.mjs) cannot travel or be loaded
 * - work-not-fetched: the run ended, but its work could not be brought back into the local worktree
 * - answered: an answer for a question that is no longer waiting (a person answered first)
 */
export const REASON_CODES = /** @type {const} */ ([
	"run-ended",
	"malformed",
	"unreadable",
	"too-large",
	"unconfirmed",
	"not-started",
	"archived",
	"unreadable-row",
	"not-delivered",
	"busy",
	"no-such-row",
	"invalid",
	"dispatch-failed",
	"disk-full",
	"start-failed",
	"never-started",
	"runner-died",
	"stopped",
	"killed-outside",
	"out-of-memory",
	"far-run-gone",
	"mirror-incomplete",
	"far-tampered",
	"session-too-large",
	"work-not-fetched",
	"answered",
]);

/** @typedef {(typeof REASON_CODES)[number]} ReasonCode */

/** @param {unknown} value @returns {value is ReasonCode} */
export function isReasonCode(value) {
	return REASON_CODES.some((code) => code === value);
}

/** The words a receipt shows for each code a runner or worker can reject a message with. */
export const RECEIPT_REASONS = /** @type {const} */ ({
	"run-ended": "run ended",
	malformed: "malformed message",
	unreadable: "unreadable message",
	"too-large": `message is larger than ${MAX_MESSAGE_BYTES} bytes`,
	unconfirmed: "the worker exited before confirming delivery",
	"not-started": "the run did not start",
	answered: "the question was already answered",
});

/** @typedef {keyof typeof RECEIPT_REASONS} ReceiptCode */

/** @param {unknown} value @returns {value is ReceiptCode} */
export function isReceiptCode(value) {
	return typeof value === "string" && Object.hasOwn(RECEIPT_REASONS, value);
}

/** A refusal or failure of the engine: `code` for programs to branch on, the message for people. */
export class BoardError extends Error {
	/** @param {ReasonCode} code @param {string} message @param {{ cause?: unknown }} [options] */
	constructor(code, message, options) {
		super(message, options);
		this.name = "BoardError";
		/** @readonly */
		this.code = code;
	}
}
