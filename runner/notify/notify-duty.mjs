// The keeper's notify duty: delivers the outbox to each notifier, at least once, in order per receiver.
// A receiver's position is outbox/cursors/<name>.json (the keeper its one writer): the last event it
// got or was given up on, its failed attempts and when to try again. A failure waits (1 s, doubling, at
// most a minute) and blocks that receiver only, so one down for a while gets what it missed, in order,
// when it is back; an event still failing 24 h after it was made is given up (logged by name, never by
// URL). Each receiver gets at most ROW_BURST messages of one row a minute: the rest wait their turn.
import { join } from "node:path";
import { ensureDir, readJsonObject, writeJsonAtomic } from "../store/fs-util.mjs";
import { readNotifiers } from "./notifiers.mjs";
import { eventNames, eventTime, outboxDir, pruneOutbox, readEvent } from "./outbox.mjs";
import { requestFor } from "./message.mjs";
import { post } from "./post.mjs";
import { rowLink, webBase } from "./web-link.mjs";

const GIVE_UP_MS = 24 * 60 * 60 * 1000;
const MAX_BACKOFF_MS = 60_000;
const ROW_BURST = 5;
const ROW_WINDOW_MS = 60_000;
const PRUNE_EVERY_MS = 60_000;

/** @typedef {{ addedAt: number, last: string, attempts: number, nextAt: number, sent: Record<string, number[]> }} Cursor */

/** @param {string} storeRoot @param {string} name */
const cursorPath = (storeRoot, name) => join(outboxDir(storeRoot), "cursors", `${name}.json`);

/** A receiver's position; a notifier added (or re-added) since starts after what was there before it. @param {string} storeRoot @param {import("./notifiers.mjs").Notifier} notifier @returns {Cursor} */
export function readCursor(storeRoot, notifier) {
	const value = readJsonObject(cursorPath(storeRoot, notifier.name));
	if (value && value.addedAt === notifier.addedAt && typeof value.last === "string")
		return {
			addedAt: notifier.addedAt,
			last: value.last,
			attempts: Number(value.attempts) || 0,
			nextAt: Number(value.nextAt) || 0,
			sent: value.sent && typeof value.sent === "object" ? /** @type {Record<string, number[]>} */ (value.sent) : {},
		};
	// Events made before the notifier was added are not its: its position starts just before that time.
	return {
		addedAt: notifier.addedAt,
		last: String(notifier.addedAt).padStart(15, "0"),
		attempts: 0,
		nextAt: 0,
		sent: {},
	};
}

/** The events a receiver has still to get, oldest first. @param {string[]} names @param {Cursor} cursor */
const pendingNames = (names, cursor) => names.filter((name) => name > cursor.last);

let lastPrune = 0;

/** @type {import("../keeper/duties.mjs").Duty} */
export const notifyDuty = {
	name: "notify",
	wanted(storeRoot) {
		const notifiers = readNotifiers(storeRoot);
		if (notifiers.length === 0) return false;
		const names = eventNames(storeRoot);
		if (names.length === 0) return false;
		return notifiers.some((n) =>
			pendingNames(names, readCursor(storeRoot, n)).some((name) => wants(storeRoot, n, name)),
		);
	},
	pass(storeRoot, ctx) {
		// Off the keeper's loop: a receiver that takes its 10 s to answer holds up no recovery. One
		// delivery round at a time; the next pass starts the next round.
		if (inFlight) return;
		inFlight = true;
		deliverAll(storeRoot, ctx)
			.then((sent) => {
				inFlight = false;
				// What came while this round was out goes now, not at the next poll (a round that sent
				// nothing waits for the poll: a receiver in its backoff is not asked again at once).
				if (sent > 0) ctx.wake?.();
			})
			.catch((error) => {
				inFlight = false;
				ctx.log(`notify: ${error instanceof Error ? error.message : String(error)}`);
			});
	},
};

let inFlight = false;

/** One round; how many messages it delivered. @param {string} storeRoot @param {import("../keeper/recovery-duty.mjs").KeeperContext} ctx */
async function deliverAll(storeRoot, ctx) {
	const notifiers = readNotifiers(storeRoot);
	const names = eventNames(storeRoot);
	const base = webBase(storeRoot);
	const now = Date.now();
	ensureDir(join(outboxDir(storeRoot), "cursors"));
	const sent = await Promise.all(notifiers.map((n) => deliver(storeRoot, n, names, base, ctx)));
	if (now - lastPrune > PRUNE_EVERY_MS) {
		lastPrune = now;
		const oldest = notifiers.map((n) => readCursor(storeRoot, n).last).sort()[0] ?? names.at(-1) ?? "";
		pruneOutbox(storeRoot, oldest, GIVE_UP_MS + 60 * 60 * 1000, now);
	}
	return sent.reduce((a, b) => a + b, 0);
}

/** @param {string} storeRoot @param {import("./notifiers.mjs").Notifier} notifier @param {string} name */
function wants(storeRoot, notifier, name) {
	const event = readEvent(storeRoot, name);
	return !event || notifier.on.includes(event.event);
}

/**
 * Sends one receiver what it has still to get, in order, until one fails or its row's burst is spent.
 * @param {string} storeRoot @param {import("./notifiers.mjs").Notifier} notifier @param {string[]} names
 * @param {string | undefined} base @param {import("../keeper/recovery-duty.mjs").KeeperContext} ctx
 */
async function deliver(storeRoot, notifier, names, base, ctx) {
	const cursor = readCursor(storeRoot, notifier);
	const save = () => writeJsonAtomic(cursorPath(storeRoot, notifier.name), cursor);
	let sent = 0;
	for (const name of pendingNames(names, cursor)) {
		const now = Date.now();
		if (now < cursor.nextAt) return sent;
		const event = readEvent(storeRoot, name);
		if (!event || !notifier.on.includes(event.event)) {
			// Not its kind (or a file of a wrong shape): passed over.
			cursor.last = name;
			save();
			continue;
		}
		const recent = (cursor.sent[event.rowId] ?? []).filter((at) => now - at < ROW_WINDOW_MS);
		if (recent.length >= ROW_BURST) return sent;
		const outcome = await post(notifier.url, requestFor(notifier.format, event, rowLink(base, event)));
		if (outcome.ok) {
			cursor.last = name;
			cursor.attempts = 0;
			cursor.nextAt = 0;
			cursor.sent = keepRecent({ ...cursor.sent, [event.rowId]: [...recent, Date.now()] }, now);
			save();
			sent += 1;
			continue;
		}
		const why = outcome.status ? `HTTP ${outcome.status}` : outcome.error;
		if (now - eventTime(name) > GIVE_UP_MS) {
			ctx.log(`notify ${notifier.name}: gave up on ${event.event} of ${event.rowId} after 24 h (${why})`);
			cursor.last = name;
			cursor.attempts = 0;
			cursor.nextAt = 0;
			save();
			continue;
		}
		cursor.attempts += 1;
		cursor.nextAt = now + Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (cursor.attempts - 1));
		ctx.log(
			`notify ${notifier.name}: ${event.event} of ${event.rowId} not delivered (${why}); attempt ${cursor.attempts}`,
		);
		save();
		return sent;
	}
	return sent;
}

/** Drops rows whose window passed. @param {Record<string, number[]>} sent @param {number} now */
function keepRecent(sent, now) {
	/** @type {Record<string, number[]>} */
	const kept = {};
	for (const [row, ats] of Object.entries(sent)) {
		const live = ats.filter((at) => now - at < ROW_WINDOW_MS);
		if (live.length > 0) kept[row] = live;
	}
	return kept;
}
