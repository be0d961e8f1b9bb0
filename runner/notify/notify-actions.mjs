// What `/agent-board notify` and the board's `S` both do to the notifiers, written once: a notifier
// in one line (its URL masked), add from the person's words, a test sent at once, remove by name.
import { randomBytes } from "node:crypto";
import { requestFor } from "./message.mjs";
import { addNotifier, makeNotifier, maskUrl, readNotifiers, removeNotifier } from "./notifiers.mjs";
import { post } from "./post.mjs";

/** @typedef {import("./notifiers.mjs").Notifier} Notifier */

/** A notifier as any screen lists it: name, format, the URL masked, its events. @param {Notifier} n */
export function notifierLine(n) {
	return `${n.name}  ${n.format}  ${maskUrl(n.url)}  on ${n.on.join(",")}`;
}

/**
 * Checks and adds (or replaces, by name) a notifier; throws what is wrong.
 * @param {string} storeRoot @param {{ name: string, url: string, format?: string, on?: string }} input
 * @param {number} now @returns {Promise<Notifier>}
 */
export async function addNotifierFrom(storeRoot, input, now) {
	const made = makeNotifier(input, now);
	if ("error" in made) throw new Error(made.error);
	await addNotifier(storeRoot, made.notifier);
	return made.notifier;
}

/** Removes a notifier by name; throws when there is none. @param {string} storeRoot @param {string} name */
export async function removeNotifierNamed(storeRoot, name) {
	if (!(await removeNotifier(storeRoot, name))) throw new Error(`no notifier named ${name}`);
}

/**
 * Posts one test message at once (not through the outbox, so its outcome is the answer): what came
 * back in words, or throws why it was not delivered. The URL is shown masked either way.
 * @param {string} storeRoot @param {string} name @param {number} now @returns {Promise<string>}
 */
export async function testNotifier(storeRoot, name, now) {
	const notifier = readNotifiers(storeRoot).find((n) => n.name === name);
	if (!notifier) throw new Error(`no notifier named ${name}`);
	const event = {
		id: randomBytes(16).toString("hex"),
		event: "test",
		rowId: "test",
		runId: "test",
		name: "agent-board",
		text: "A test message from agent-board: this notifier works.",
		at: now,
	};
	const outcome = await post(notifier.url, requestFor(notifier.format, event, undefined));
	const how = outcome.status ? `HTTP ${outcome.status}` : (outcome.error ?? "no answer");
	if (!outcome.ok) throw new Error(`test to ${notifier.name} (${maskUrl(notifier.url)}) not delivered: ${how}`);
	return `test to ${notifier.name} (${maskUrl(notifier.url)}): delivered (${how})`;
}
