// A run's control channel on disk. Anyone drops a message into runs/<runId>/inbox/ (temp + rename);
// only the run's owner (its runner) claims it, once, by renaming it into claimed/, and answers with
// receipts/<id>.json. A message nobody could deliver is answered "rejected" with the reason.
import { randomBytes } from "node:crypto";
import { readdirSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { ensureDir, writeJsonAtomic } from "../store/fs-util.mjs";
import { isOneOf } from "../protocol.mjs";
import { MAX_MESSAGE_BYTES, RECEIPT_REASONS } from "./reasons.mjs";
import { addReceipt } from "./state-rules.mjs";
import { flatWindow } from "./text-rules.mjs";
import { DELIVER_AS } from "./vocabulary.mjs";
import { readJsonObject, readTextNoFollow } from "../store/safe-read.mjs";

const PREVIEW_CHARS = 80;
/** JSON escaping can make a text up to six times longer; a bigger file is refused without reading it. */
const MAX_MESSAGE_FILE_BYTES = 6 * MAX_MESSAGE_BYTES + 4096;

/**
 * @typedef {object} InboxMessage
 * @property {string} id
 * @property {"message" | "stop" | "budget"} kind   budget: a far run's link decided a held turn's end (BudgetVerdict)
 * @property {string} [text]
 * @property {import("../protocol.mjs").DeliverAs} [deliverAs]
 * @property {string} [answers]  only the answer to this ask_user call (the supervisor's)
 * @property {"supervisor"} [from]
 * @property {string} [by]  who decided a supervisor's answer: "rule <file:line>" or "model" (its transcript says so)
 * @property {number} at
 * @property {string} [turn]  budget: the held turn end it decides
 * @property {boolean} [go]   budget: the worker goes on (else the run is paused at that turn's end)
 * @property {Record<string, unknown>} [budget]  budget: the status's budget view as the link's gate left it
 * @property {string} [question]  budget: the pause's question
 * @property {string[]} [options]  budget: its choices
 * @property {{ text: string, detail: Record<string, unknown> }[]} [notes]  budget: the gate's lines for the row's events
 */

/** @typedef {import("../../src/board/engine/types.ts").Receipt} Receipt */

/**
 * A claimed file that is no message, or one too large to deliver: rejected with this code.
 * @typedef {{ id: string, rejected: import("./reasons.mjs").ReceiptCode, detail?: string }} RejectedMessage
 */

/** @param {string} runDir */
export const inboxDir = (runDir) => join(runDir, "inbox");
/** @param {string} runDir */
const claimedDir = (runDir) => join(runDir, "claimed");
/** @param {string} runDir */
const receiptsDir = (runDir) => join(runDir, "receipts");

/** @param {string | undefined} text */
export function preview(text) {
	const flat = flatWindow(text ?? "", "start");
	return flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS - 3)}...` : flat;
}

/**
 * @param {string} runDir
 * @param {{ kind: "message" | "stop", text?: string, deliverAs?: import("../protocol.mjs").DeliverAs, answers?: string, from?: "supervisor", by?: string }} message
 * @returns {string} the message id
 */
export function dropMessage(runDir, message) {
	const id = `${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
	ensureDir(inboxDir(runDir));
	writeJsonAtomic(join(inboxDir(runDir), `${id}.json`), { ...message, id, at: Date.now() });
	return id;
}

/** @param {string} runDir */
export function inboxNames(runDir) {
	try {
		return readdirSync(inboxDir(runDir))
			.filter((name) => name.endsWith(".json") && !name.startsWith("."))
			.sort();
	} catch {
		return [];
	}
}

/** Whether a stop waits in the inbox (read, not claimed: the owner claims it when it serves the inbox). @param {string} runDir */
export function stopWaiting(runDir) {
	return inboxNames(runDir).some((name) => {
		return readJsonObject(join(inboxDir(runDir), name))?.kind === "stop";
	});
}

/** @param {unknown} value @returns {value is InboxMessage} */
function validMessage(value) {
	const m = /** @type {Record<string, unknown>} */ (value);
	if (!m || typeof m !== "object" || typeof m.id !== "string") return false;
	if (m.kind === "stop") return true;
	if (m.kind === "budget") return typeof m.turn === "string" && typeof m.go === "boolean";
	return (
		m.kind === "message" &&
		typeof m.text === "string" &&
		(m.deliverAs === undefined || isOneOf(DELIVER_AS, m.deliverAs)) &&
		(m.answers === undefined || typeof m.answers === "string") &&
		(m.by === undefined || typeof m.by === "string")
	);
}

/**
 * Claims every message waiting in the inbox, oldest first. Files that are no message, and messages
 * over MAX_MESSAGE_BYTES, are claimed too and come back as `{ id, rejected }` so the owner answers them.
 * @param {string} runDir
 * @returns {Array<InboxMessage | RejectedMessage>}
 */
export function claimMessages(runDir) {
	/** @type {Array<InboxMessage | RejectedMessage>} */
	const out = [];
	for (const name of inboxNames(runDir)) {
		const id = name.slice(0, -".json".length);
		const target = join(claimedDir(runDir), name);
		try {
			ensureDir(claimedDir(runDir));
			renameSync(join(inboxDir(runDir), name), target);
		} catch {
			continue;
		}
		out.push(readClaimed(target, id));
	}
	return out;
}

/** @param {string} path @param {string} id @returns {InboxMessage | RejectedMessage} */
function readClaimed(path, id) {
	let value;
	try {
		if (statSync(path).size > MAX_MESSAGE_FILE_BYTES) return { id, rejected: "too-large" };
		value = JSON.parse(readTextNoFollow(path));
	} catch (error) {
		return { id, rejected: "unreadable", detail: error instanceof Error ? error.message : String(error) };
	}
	if (!validMessage(value) || value.id !== id) return { id, rejected: "malformed" };
	if (value.text !== undefined && Buffer.byteLength(value.text) > MAX_MESSAGE_BYTES)
		return { id, rejected: "too-large" };
	return value;
}

/**
 * The receipt for a message nobody will deliver; `reason` is the code's words (and a detail).
 * @param {string} id @param {import("./reasons.mjs").ReceiptCode} code @param {number} at @param {string} [preview] @param {string} [detail]
 * @returns {Receipt}
 */
export function rejectionReceipt(id, code, at, preview = "", detail) {
	return {
		id,
		status: "rejected",
		code,
		reason: detail ? `${RECEIPT_REASONS[code]}: ${detail}` : RECEIPT_REASONS[code],
		at,
		preview,
	};
}

/** @param {string} runDir @param {Receipt} receipt */
export function writeReceipt(runDir, receipt) {
	ensureDir(receiptsDir(runDir));
	writeJsonAtomic(join(receiptsDir(runDir), `${receipt.id}.json`), receipt);
}

/** @param {string} runDir @param {string} id */
export function receiptPath(runDir, id) {
	return join(receiptsDir(runDir), `${id}.json`);
}

/**
 * Answers every message waiting for a run that will never reach a worker (the run ended, or was
 * stopped or failed before it started): each is claimed, gets a rejected receipt with the code and
 * the detail, and shows in `status` (which the caller, the run's owner, writes).
 * @param {string} runDir @param {import("../../src/board/engine/types.ts").RunStatus} status
 * @param {import("./reasons.mjs").ReceiptCode} code @param {number} now @param {string} [detail]
 */
export function rejectWaiting(runDir, status, code, now, detail) {
	for (const message of claimMessages(runDir)) {
		const receipt =
			"rejected" in message
				? rejectionReceipt(message.id, message.rejected, now, "", message.detail)
				: rejectionReceipt(message.id, code, now, preview(message.text ?? message.kind), detail);
		try {
			writeReceipt(runDir, receipt);
		} catch {
			// The status below still shows it.
		}
		addReceipt(status, receipt);
	}
}
