// The row's address on the web page, when the store's web server runs (web/server.json names a live
// process: src/web/web-files.ts). A message carries it so the person lands on the row: `/?row=<id>`,
// and `&answer=1` for a question (the page opens the answer box; it asks for the login first when the
// browser has no cookie).
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { readJsonObject } from "../store/fs-util.mjs";
import { isAlive } from "../store/proc.mjs";

/** @param {string} host */
function shownHost(host) {
	if (host !== "0.0.0.0" && host !== "::" && host !== "[::]")
		return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
	for (const list of Object.values(networkInterfaces()))
		for (const entry of list ?? []) if (entry.family === "IPv4" && !entry.internal) return entry.address;
	return "127.0.0.1";
}

/** The page's base URL, or undefined when no web server runs. @param {string} storeRoot */
export function webBase(storeRoot) {
	const record = readJsonObject(join(storeRoot, "web", "server.json"));
	if (!record || typeof record.pid !== "number" || typeof record.start !== "string") return undefined;
	if (typeof record.host !== "string" || typeof record.port !== "number") return undefined;
	if (!isAlive(record.pid, record.start)) return undefined;
	return `http://${shownHost(record.host)}:${record.port}`;
}

/**
 * A row's address on the page (the page opens it once the board is there: page-tools.js's revealFromUrl);
 * `answer`: its answer box open too. The one statement of it: the report and the page use it as well.
 * @param {string} base @param {string} id @param {boolean} [answer]
 */
export function rowUrl(base, id, answer = false) {
	return `${base}/?row=${encodeURIComponent(id)}${answer ? "&answer=1" : ""}`;
}

/** @param {string | undefined} base @param {import("./outbox.mjs").OutboxEvent} event */
export function rowLink(base, event) {
	if (!base) return undefined;
	return rowUrl(base, event.rowId, event.event === "needs-input" || event.event === "budget");
}
