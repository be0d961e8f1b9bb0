// The store's notifiers (notifiers.json, 0600, changed under notifiers.lock): where a row's events go
// (`notify add|list|test|remove`). A URL can hold a secret (a topic, a webhook token): it is stored
// 0600 and only ever shown masked (maskUrl): scheme and host, the rest hidden. Never logged.
import { join } from "node:path";
import { ensureDir, readJsonObject, writeJsonAtomic } from "../store/fs-util.mjs";
import { withLockFile } from "../store/row-lock.mjs";

export const FORMATS = /** @type {const} */ (["json", "ntfy", "slack", "discord"]);
export const EVENTS = /** @type {const} */ (["needs-input", "failed", "completed", "budget", "answered"]);
/** What a notifier gets when `--on` is not given: what needs the person, and how runs end. */
export const DEFAULT_EVENTS = ["needs-input", "failed", "completed", "budget"];
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/;

/** @typedef {{ name: string, url: string, format: (typeof FORMATS)[number], on: string[], addedAt: number }} Notifier */

/** @param {string} storeRoot */
export const notifiersPath = (storeRoot) => join(storeRoot, "notifiers.json");

/** @param {unknown} value @returns {value is Notifier} */
function isNotifier(value) {
	const n = /** @type {Record<string, unknown>} */ (value);
	return (
		!!n &&
		typeof n.name === "string" &&
		NAME.test(n.name) &&
		typeof n.url === "string" &&
		!urlProblem(n.url) &&
		FORMATS.includes(/** @type {never} */ (n.format)) &&
		Array.isArray(n.on) &&
		n.on.every((e) => EVENTS.includes(/** @type {never} */ (e))) &&
		typeof n.addedAt === "number"
	);
}

/** The notifiers; none when the file is absent. Entries of a wrong shape are passed over. @param {string} storeRoot @returns {Notifier[]} */
export function readNotifiers(storeRoot) {
	const list = readJsonObject(notifiersPath(storeRoot))?.notifiers;
	return Array.isArray(list) ? list.filter(isNotifier) : [];
}

/** What is wrong with a notifier's URL, or undefined. @param {string} url */
export function urlProblem(url) {
	let parsed;
	try {
		parsed = new URL(url);
	} catch {
		return "not a URL";
	}
	return parsed.protocol === "http:" || parsed.protocol === "https:" ? undefined : "only http and https URLs";
}

/** The URL as shown anywhere: scheme and host (no user, no path, no query), the rest masked. @param {string} url */
export function maskUrl(url) {
	try {
		const parsed = new URL(url);
		const rest = parsed.pathname.length > 1 || parsed.search || parsed.username ? "/***" : "";
		return `${parsed.protocol}//${parsed.host}${rest}`;
	} catch {
		return "(not a URL)";
	}
}

/**
 * Checks a notifier's fields, as `notify add` got them. Returns the notifier or what is wrong.
 * @param {{ name: string, url: string, format?: string, on?: string }} input @param {number} now
 * @returns {{ notifier: Notifier } | { error: string }}
 */
export function makeNotifier(input, now) {
	if (!NAME.test(input.name))
		return {
			error: `a notifier's name is letters, digits, "_", "-" or "." (up to 40), not ${JSON.stringify(input.name)}`,
		};
	const bad = urlProblem(input.url);
	if (bad) return { error: `${maskUrl(input.url)}: ${bad}` };
	const format = input.format ?? "json";
	if (!FORMATS.includes(/** @type {never} */ (format)))
		return { error: `--format is one of ${FORMATS.join(", ")}, not ${JSON.stringify(format)}` };
	const on =
		input.on === undefined
			? DEFAULT_EVENTS
			: input.on
					.split(",")
					.map((e) => e.trim())
					.filter(Boolean);
	const unknown = on.filter((e) => !EVENTS.includes(/** @type {never} */ (e)));
	if (unknown.length > 0 || on.length === 0)
		return { error: `--on takes some of ${EVENTS.join(",")} (comma-separated), not ${JSON.stringify(input.on)}` };
	return {
		notifier: {
			name: input.name,
			url: input.url,
			format: /** @type {Notifier["format"]} */ (format),
			on,
			addedAt: now,
		},
	};
}

/** Changes the list under its lock. @param {string} storeRoot @param {(list: Notifier[]) => Notifier[]} change */
async function update(storeRoot, change) {
	ensureDir(storeRoot);
	await withLockFile(join(storeRoot, "notifiers.lock"), () => {
		writeJsonAtomic(notifiersPath(storeRoot), { notifiers: change(readNotifiers(storeRoot)) });
	});
}

/** Adds (or replaces, by name) a notifier. @param {string} storeRoot @param {Notifier} notifier */
export function addNotifier(storeRoot, notifier) {
	return update(storeRoot, (list) => [...list.filter((n) => n.name !== notifier.name), notifier]);
}

/** Removes a notifier; whether it was there. @param {string} storeRoot @param {string} name */
export async function removeNotifier(storeRoot, name) {
	let found = false;
	await update(storeRoot, (list) => {
		found = list.some((n) => n.name === name);
		return list.filter((n) => n.name !== name);
	});
	return found;
}
