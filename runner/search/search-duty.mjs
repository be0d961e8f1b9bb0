// The keeper's search duty: while the store's keeper lives (a run open, a queue, a notifier owed), it keeps
// the search index up to date, so a row that just finished is found at once and a search meanwhile starts no
// writer process (an update that looks for what changed stats every notify/ mark: 1.5 s at 100,000 rows).
// It watches notify/ (every writer touches a row's mark on each change) and rows/ (rows that came or went) for
// the names of the rows that changed and indexes those alone (updateRows), under the index's lock, at most
// once a second, and at once when a search asks (search/ask). Its first pass, and any after a missed watch,
// is a whole update (updateIndex). search/kept.json names the keeper and when its last pass began: a search
// reads it (search.mjs). It never builds an index: a store nobody searched has none, and a build is the
// search's writer's.
import { readFileSync, statSync, watch } from "node:fs";
import { join } from "node:path";
import { writeJsonAtomic } from "../store/fs-util.mjs";
import { isAlive, processStartTime } from "../store/proc.mjs";
import { isValidId } from "../store/store-layout.mjs";

/** A pass of this duty at most this often while rows change (a running row touches its mark four times a second). */
const MIN_GAP_MS = 1000;
export const KEPT_FILE = "kept.json";
export const ASK_FILE = "ask";

/** @param {string} storeRoot */
const searchDir = (storeRoot) => join(storeRoot, "search");

/** @param {string} path */
function mtimeOf(path) {
	try {
		return statSync(path).mtimeMs;
	} catch {
		return -1;
	}
}

/**
 * The keeper that keeps the index, when one does: kept.json names a live process (only a keeper writes it).
 * @param {string} storeRoot @returns {{ pid: number, start: string, at: number } | undefined}
 */
export function readKept(storeRoot) {
	try {
		const value = JSON.parse(readFileSync(join(searchDir(storeRoot), KEPT_FILE), "utf8"));
		if (typeof value?.pid !== "number" || typeof value.start !== "string" || typeof value.at !== "number")
			return undefined;
		return value;
	} catch {
		return undefined;
	}
}

/** This keeper's state: the rows changed since its last pass, and whether the next pass must be whole. */
const state = {
	/** @type {Set<string>} */
	pending: new Set(),
	whole: true,
	asked: false,
	watching: false,
	lastPass: 0,
	/** @type {ReturnType<typeof setTimeout> | undefined} */
	timer: undefined,
	/** @type {import("../keeper/recovery-duty.mjs").KeeperContext | undefined} */
	ctx: undefined,
};

/** Wakes the keeper for a pass when this duty's gap allows. @param {number} [delay] */
function schedule(delay) {
	if (state.timer || !state.ctx) return;
	const ctx = state.ctx;
	state.timer = setTimeout(
		() => {
			state.timer = undefined;
			ctx.wake?.();
		},
		delay ?? Math.max(0, state.lastPass + MIN_GAP_MS - Date.now()),
	);
	state.timer.unref?.();
}

/** @param {string} storeRoot */
function startWatching(storeRoot) {
	if (state.watching) return;
	state.watching = true;
	state.whole = true;
	for (const dir of ["notify", "rows"]) {
		try {
			watch(join(storeRoot, dir), { persistent: false }, (_event, name) => {
				if (typeof name === "string" && isValidId(name)) state.pending.add(name);
				else state.whole = true;
				schedule();
			}).on("error", () => {
				state.whole = true;
			});
		} catch {
			// No such directory yet, or no inotify: every pass is whole.
			state.whole = true;
		}
	}
	try {
		watch(searchDir(storeRoot), { persistent: false }, (_event, name) => {
			if (name !== ASK_FILE) return;
			state.asked = true;
			clearTimeout(state.timer);
			state.timer = undefined;
			schedule(0);
		}).on("error", () => undefined);
	} catch {
		// A search that asks waits for the poll's pass, or starts its own writer.
	}
}

/** @param {string} storeRoot */
const hasIndex = (storeRoot) => mtimeOf(join(searchDir(storeRoot), "index.sqlite")) >= 0;

/** @type {import("../keeper/duties.mjs").Duty} */
export const searchDuty = {
	name: "search",
	start(_storeRoot, ctx) {
		state.ctx = ctx;
	},
	wanted(storeRoot) {
		if (!hasIndex(storeRoot)) return false;
		// In the keeper: watch from the moment there is an index to keep.
		if (state.ctx && !state.watching) startWatching(storeRoot);
		if (state.watching) return state.whole || state.asked || state.pending.size > 0;
		// Elsewhere (whoever starts a keeper): a row changed since the keeper's last pass.
		const kept = readKept(storeRoot);
		return !kept || mtimeOf(join(storeRoot, "notify")) > kept.at;
	},
	async pass(storeRoot, ctx) {
		state.ctx = ctx;
		if (!state.whole && !state.asked && Date.now() - state.lastPass < MIN_GAP_MS) {
			schedule();
			return;
		}
		const began = Date.now();
		const whole = state.whole;
		const ids = [...state.pending];
		state.pending.clear();
		state.whole = false;
		state.asked = false;
		const { updateIndex, updateRows } = await import("./search-index.mjs");
		let done;
		try {
			done = whole ? await updateIndex(storeRoot, { budgetMs: 1500 }) : await updateRows(storeRoot, ids);
		} catch (error) {
			// A damaged index (the keeper logs why): the next pass is whole, and rebuilds it.
			state.whole = true;
			throw error;
		}
		if (!done || ("complete" in done && !done.complete)) {
			// The lock was held (a search's writer) or the budget ran out: the same again at the next pass.
			for (const id of ids) state.pending.add(id);
			state.whole ||= whole;
			schedule(MIN_GAP_MS);
			return;
		}
		state.lastPass = Date.now();
		writeJsonAtomic(join(searchDir(storeRoot), KEPT_FILE), {
			pid: process.pid,
			start: processStartTime(process.pid),
			at: began,
		});
		if (state.pending.size > 0 || state.asked || state.whole) schedule(state.asked ? 0 : undefined);
	},
};

/** Whether a live keeper keeps the index (its kept.json). @param {string} storeRoot */
export function keptByKeeper(storeRoot) {
	const kept = readKept(storeRoot);
	return kept && isAlive(kept.pid, kept.start) ? kept : undefined;
}
