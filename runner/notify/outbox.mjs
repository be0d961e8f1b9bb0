// The notifiers' outbox (outbox/ in the store): one file per event, written once by the one writer of
// that moment (a run's runner: its question, budget pause, end; the supervisor in it: its answer) and
// delivered by the store's keeper (notify-duty.mjs). An event's key says which happening it is (a run's
// question n, a run's end): a second emit of one key is dropped (keys/<hash>, O_EXCL), and receivers get
// it as an idempotency key, so at-least-once delivery is once for one that dedupes.
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { createExclusive } from "../store/owner-file.mjs";
import { ensureDir, readJsonObject, writeJsonAtomic } from "../store/fs-util.mjs";
import { readNotifiers } from "./notifiers.mjs";

/** Longest text an event carries (a question can be long; a phone shows a few lines). */
const TEXT_CHARS = 1000;

/** @typedef {{ id: string, event: string, rowId: string, runId: string, name: string, text: string, at: number }} OutboxEvent */

/** @param {string} storeRoot */
export const outboxDir = (storeRoot) => join(storeRoot, "outbox");
/** @param {string} storeRoot */
export const eventsDir = (storeRoot) => join(outboxDir(storeRoot), "events");

/**
 * Untrusted text (a model's question) as data: no control characters (an escape sequence, a bell, a
 * bidi override), whitespace runs kept readable, cut to TEXT_CHARS.
 * @param {unknown} text
 */
export function cleanText(text) {
	const flat = String(text ?? "")
		.replace(/\r\n?/g, "\n")
		.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "")
		.trim();
	return flat.length > TEXT_CHARS ? `${flat.slice(0, TEXT_CHARS - 1)}…` : flat;
}

/** Whether some notifier of the store takes this event. @param {string} storeRoot @param {string} event */
export function anyoneWants(storeRoot, event) {
	return readNotifiers(storeRoot).some((n) => n.on.includes(event));
}

/**
 * Puts an event in the outbox, once per key; nothing when no notifier takes it. Returns the event
 * written, if one was. Never throws (a run goes on whatever its notices do).
 * @param {string} storeRoot
 * @param {{ key: string, event: string, rowId: string, runId: string, name: string, text: string }} input
 * @param {number} [now]
 */
export function emitEvent(storeRoot, input, now = Date.now()) {
	try {
		if (!anyoneWants(storeRoot, input.event)) return undefined;
		const id = createHash("sha256").update(input.key).digest("hex").slice(0, 32);
		const keys = join(outboxDir(storeRoot), "keys");
		ensureDir(keys);
		if (!createExclusive(join(keys, id), `${now}\n`)) return undefined;
		ensureDir(eventsDir(storeRoot));
		/** @type {OutboxEvent} */
		const event = {
			id,
			event: input.event,
			rowId: input.rowId,
			runId: input.runId,
			name: cleanText(input.name).slice(0, 120),
			text: cleanText(input.text),
			at: now,
		};
		// Names sort in the order events were made (ms, then a random tail for one millisecond's ties).
		writeJsonAtomic(join(eventsDir(storeRoot), eventName(now)), event);
		return event;
	} catch {
		return undefined;
	}
}

let lastAt = 0;
let seq = 0;
/** @param {number} at */
function eventName(at) {
	seq = at === lastAt ? seq + 1 : 0;
	lastAt = at;
	return `${String(at).padStart(15, "0")}-${String(seq).padStart(4, "0")}-${randomBytes(4).toString("hex")}.json`;
}

/** The outbox's event names, oldest first. @param {string} storeRoot @returns {string[]} */
export function eventNames(storeRoot) {
	try {
		return readdirSync(eventsDir(storeRoot))
			.filter((name) => /^\d{15}-\d{4}-[0-9a-f]{8}\.json$/.test(name))
			.sort();
	} catch {
		return [];
	}
}

/** One event, when its file is whole and of its shape. @param {string} storeRoot @param {string} name @returns {OutboxEvent | undefined} */
export function readEvent(storeRoot, name) {
	const value = readJsonObject(join(eventsDir(storeRoot), name));
	if (!value) return undefined;
	const strings = ["id", "event", "rowId", "runId", "name", "text"];
	return strings.every((key) => typeof value[key] === "string") && typeof value.at === "number"
		? /** @type {OutboxEvent} */ (/** @type {unknown} */ (value))
		: undefined;
}

/** The time an event name was made at. @param {string} name */
export const eventTime = (name) => Number(name.slice(0, 15));

/**
 * Removes what every receiver is past and older than `keepMs`: events and their keys.
 * @param {string} storeRoot @param {string} oldestCursor the least of the receivers' positions ("" for none) @param {number} keepMs @param {number} now
 */
export function pruneOutbox(storeRoot, oldestCursor, keepMs, now) {
	for (const name of eventNames(storeRoot)) {
		if (name > oldestCursor || now - eventTime(name) < keepMs) break;
		try {
			unlinkSync(join(eventsDir(storeRoot), name));
		} catch {
			// Gone already.
		}
	}
	const keys = join(outboxDir(storeRoot), "keys");
	let names = [];
	try {
		names = readdirSync(keys);
	} catch {
		return;
	}
	for (const name of names) {
		try {
			if (now - statSync(join(keys, name)).mtimeMs > keepMs) unlinkSync(join(keys, name));
		} catch {
			// Gone already.
		}
	}
}
