// A search as every UI makes it (the subcommand, the board's `/`, the web server): bring the index up to date
// (its writer, index-update.mjs, in a process of its own, waited for a bounded time), then query it read-only.
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isEmptyQuery, parseQuery } from "./query-parse.mjs";
import { ASK_FILE, keptByKeeper, readKept } from "./search-duty.mjs";
import { indexPaths, isCorruptError } from "./search-index.mjs";
import { openReader, queryIndex } from "./search-query.mjs";

const UPDATER = join(dirname(fileURLToPath(import.meta.url)), "index-update.mjs");

/**
 * @typedef {{ built?: string, rows?: number, complete?: boolean, busy?: boolean, error?: string, timedOut?: boolean, check?: boolean }} RefreshResult
 */

/** The writer process each store has running from this process, by store: its result when it exits. */
const running = new Map();

/**
 * Runs the index's writer for `storeRoot` and waits for it up to `timeoutMs`. It goes on past that (a build
 * of a big store finishes, and a later search finds it), and while it runs a new search waits for it rather
 * than starting another: one writer process per store from here, whatever the searches.
 * @param {string} storeRoot
 * @param {{ timeoutMs?: number, budgetMs?: number, node?: string, check?: boolean }} [options]
 * @returns {Promise<RefreshResult>}
 */
export function refreshIndex(storeRoot, options = {}) {
	/** @type {Promise<RefreshResult> | undefined} */
	let exit = running.get(storeRoot);
	if (!exit || options.check) {
		const started = spawnWriter(storeRoot, options);
		exit = started;
		running.set(storeRoot, started);
		void started.then(() => {
			if (running.get(storeRoot) === started) running.delete(storeRoot);
		});
	}
	const timeoutMs = options.timeoutMs ?? 2000;
	return new Promise((resolve) => {
		// Ref'd: the writer and its pipes are not, and a pi -p waiting for its search must not exit meanwhile.
		const timer = setTimeout(() => resolve({ timedOut: true }), timeoutMs);
		void exit.then((result) => {
			clearTimeout(timer);
			resolve(result);
		});
	});
}

/** @param {string} storeRoot @param {{ budgetMs?: number, node?: string, check?: boolean }} options @returns {Promise<RefreshResult>} */
function spawnWriter(storeRoot, options) {
	return new Promise((resolve) => {
		// A budget well inside the 2 s the search waits: the process's start and its listings come before it,
		// and what the budget leaves is taken up by the next search's writer.
		const args = [UPDATER, storeRoot, String(options.budgetMs ?? 1000), "2000"];
		if (options.check) args.push("check");
		const child = spawn(options.node ?? process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
		// A process that is done (pi -p after its search) does not wait for the writer: it finishes alone.
		child.unref();
		let out = "";
		let err = "";
		child.stdout.on("data", (chunk) => {
			out += chunk;
		});
		child.stderr.on("data", (chunk) => {
			if (err.length < 4096) err += chunk;
		});
		for (const stream of [child.stdout, child.stderr]) {
			// stdio pipes are sockets: unref'd, they keep no process waiting either.
			const socket = /** @type {import("node:net").Socket} */ (/** @type {unknown} */ (stream));
			socket.unref();
		}
		child.on("error", (error) => resolve({ error: error.message }));
		child.on("close", (code) => {
			try {
				resolve(JSON.parse(out.trim().split("\n").pop() ?? ""));
			} catch {
				resolve({ error: `the index's update exited ${code}: ${err.trim().slice(0, 500)}` });
			}
		});
	});
}

/**
 * @typedef {object} SearchResult
 * @property {import("./search-query.mjs").SearchHit[]} hits
 * @property {import("./query-parse.mjs").ParsedQuery} query
 * @property {string} [note]   why the hits may be short: the index is being built, its update failed
 */

/**
 * @param {string} storeRoot @param {string} text
 * @param {{ limit?: number, timeoutMs?: number, refresh?: boolean, now?: number }} [options]
 * @returns {Promise<SearchResult>}
 */
export async function searchStore(storeRoot, text, options = {}) {
	const query = parseQuery(text, options.now ?? Date.now());
	if (isEmptyQuery(query)) return { hits: [], query };
	const refreshed =
		options.refresh === false
			? {}
			: ((await askKeeper(storeRoot, options.timeoutMs)) ??
				(await refreshIndex(storeRoot, { timeoutMs: options.timeoutMs })));
	const note = noteOf(refreshed);
	for (let attempt = 0; ; attempt++) {
		try {
			const db = await openReader(storeRoot);
			if (!db) return { hits: [], query, note: note ?? "the search index is being built: ask again in a moment" };
			try {
				return { hits: queryIndex(db, query, { limit: options.limit }), query, ...(note ? { note } : {}) };
			} finally {
				db.close();
			}
		} catch (error) {
			// A damaged index: its writer checks it, moves it aside and builds it again.
			if (!isCorruptError(error) || attempt > 0) throw error;
			await refreshIndex(storeRoot, { timeoutMs: options.timeoutMs ?? 60_000, check: true });
		}
	}
}

/**
 * While the store's keeper keeps the index (search-duty.mjs), a search starts no writer: it asks the keeper
 * (search/ask) and waits for a pass that began after the ask. Undefined when no live keeper keeps it or its
 * pass does not come in time (a build elsewhere holds the lock): then the search's own writer runs.
 * @param {string} storeRoot @param {number} [timeoutMs] @returns {Promise<RefreshResult | undefined>}
 */
async function askKeeper(storeRoot, timeoutMs = 2000) {
	if (!keptByKeeper(storeRoot) || !existsSync(indexPaths(storeRoot).file)) return undefined;
	const asked = Date.now();
	try {
		writeFileSync(join(indexPaths(storeRoot).dir, ASK_FILE), `${asked}\n`, { mode: 0o600 });
	} catch {
		return undefined;
	}
	const deadline = asked + Math.min(timeoutMs, 2000);
	while (Date.now() < deadline) {
		if ((readKept(storeRoot)?.at ?? 0) >= asked) return {};
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
	return undefined;
}

/** @param {RefreshResult} refreshed */
function noteOf(refreshed) {
	if (refreshed.error) return `the search index could not be updated: ${refreshed.error}`;
	if (refreshed.timedOut || refreshed.complete === false)
		return "the search index is still catching up: the newest rows may be missing";
	return undefined;
}
