// A run's control channel on disk. Anyone drops a message into runs/<runId>/inbox/ (temp + rename);
// only the run's owner (its runner) claims it, once, by renaming it into claimed/, and answers with
// receipts/<id>.json. A message nobody could deliver is answered "rejected" with the reason.
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { ensureDir, writeJsonAtomic } from "./fs-util.mjs";

export const MAX_MESSAGE_BYTES = 1024 * 1024;
const PREVIEW_CHARS = 80;

/**
 * @typedef {object} InboxMessage
 * @property {string} id
 * @property {"message" | "stop"} kind
 * @property {string} [text]
 * @property {"steer" | "followUp"} [deliverAs]
 * @property {number} at
 */

/**
 * @typedef {object} Receipt
 * @property {string} id
 * @property {"delivered" | "rejected"} status
 * @property {"steer" | "followUp" | "answer"} [as]
 * @property {number} at
 * @property {string} [reason]
 * @property {string} preview
 */

/** @param {string} runDir */
export const inboxDir = (runDir) => join(runDir, "inbox");
/** @param {string} runDir */
const claimedDir = (runDir) => join(runDir, "claimed");
/** @param {string} runDir */
const receiptsDir = (runDir) => join(runDir, "receipts");

/** @param {string | undefined} text */
export function preview(text) {
	const flat = (text ?? "").replace(/\s+/g, " ").trim();
	return flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS - 3)}...` : flat;
}

/**
 * @param {string} runDir
 * @param {{ kind: "message" | "stop", text?: string, deliverAs?: "steer" | "followUp" }} message
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

/** @param {unknown} value @returns {value is InboxMessage} */
function validMessage(value) {
	const m = /** @type {Record<string, unknown>} */ (value);
	if (!m || typeof m !== "object" || typeof m.id !== "string") return false;
	if (m.kind === "stop") return true;
	return m.kind === "message" && typeof m.text === "string" && (m.deliverAs === undefined || m.deliverAs === "steer" || m.deliverAs === "followUp");
}

/**
 * Claims every message waiting in the inbox, oldest first. Malformed files are claimed too and come
 * back as `{ id, invalid }` so the owner can reject them with a reason.
 * @param {string} runDir
 * @returns {Array<InboxMessage | { id: string, invalid: string }>}
 */
export function claimMessages(runDir) {
	/** @type {Array<InboxMessage | { id: string, invalid: string }>} */
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
		let value;
		try {
			value = JSON.parse(readFileSync(target, "utf8"));
		} catch (error) {
			out.push({ id, invalid: `unreadable message: ${error instanceof Error ? error.message : String(error)}` });
			continue;
		}
		out.push(validMessage(value) && value.id === id ? value : { id, invalid: "malformed message" });
	}
	return out;
}

/** @param {string} runDir @param {Receipt} receipt */
export function writeReceipt(runDir, receipt) {
	ensureDir(receiptsDir(runDir));
	writeJsonAtomic(join(receiptsDir(runDir), `${receipt.id}.json`), receipt);
}

/** @param {string} runDir @param {string} id @returns {Receipt | undefined} */
export function readReceipt(runDir, id) {
	try {
		const value = JSON.parse(readFileSync(join(receiptsDir(runDir), `${id}.json`), "utf8"));
		if (value && (value.status === "delivered" || value.status === "rejected")) return value;
	} catch {
		// Not answered yet.
	}
	return undefined;
}
