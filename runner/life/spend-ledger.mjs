// <store>/spend/<YYYY-MM-DD>.jsonl: what runs spent, one line per turn, appended by each runner while a
// budget applies to its run (`{ at, row, run, set?, target?, pool?, tokens, cost }`; a target run's
// lines are its link's), read to sum an attempt
// set's, a target's or the board's spend of a day. Many runners append to one file: each line is one
// write(2) on an O_APPEND descriptor, whole on a local file system. A torn or foreign line is skipped.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { appendNoFollow } from "../store/append-file.mjs";
import { ensureDir } from "../store/fs-util.mjs";
import { NO_SPEND } from "./budget.mjs";

/** @typedef {{ at: number, row: string, run: string, set?: string, target?: string, pool?: string, tokens: number, cost: number }} SpendLine */

/** The local calendar day of a time, "2025-05-02". @param {number} at */
export function dayOf(at) {
	const d = new Date(at);
	return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

/** @param {string} storeDir */
export const spendDir = (storeDir) => join(storeDir, "spend");

/** @param {string} storeDir @param {SpendLine} line */
export function appendSpend(storeDir, line) {
	ensureDir(spendDir(storeDir));
	appendNoFollow(join(spendDir(storeDir), `${dayOf(line.at)}.jsonl`), `${JSON.stringify(line)}\n`);
}

/** @param {unknown} value @returns {value is SpendLine} */
function isSpendLine(value) {
	const v = /** @type {Record<string, unknown>} */ (value);
	return (
		!!v &&
		typeof v === "object" &&
		typeof v.row === "string" &&
		typeof v.tokens === "number" &&
		typeof v.cost === "number" &&
		Number.isFinite(v.tokens) &&
		Number.isFinite(v.cost)
	);
}

/**
 * Reads day files incrementally (only the bytes appended since the last read), so a runner that sums
 * at every turn end reads each line once.
 */
export class SpendLedger {
	/** @param {string} storeDir */
	constructor(storeDir) {
		this.storeDir = storeDir;
		/** @type {Map<string, { offset: number, rest: string, lines: SpendLine[] }>} */
		this.days = new Map();
	}

	/** Every line of one day. @param {string} day @returns {SpendLine[]} */
	lines(day) {
		let cached = this.days.get(day);
		if (!cached) {
			cached = { offset: 0, rest: "", lines: [] };
			this.days.set(day, cached);
		}
		let fd;
		try {
			fd = openSync(join(spendDir(this.storeDir), `${day}.jsonl`), "r");
		} catch {
			return cached.lines;
		}
		try {
			const size = fstatSync(fd).size;
			if (size > cached.offset) {
				const buffer = Buffer.alloc(size - cached.offset);
				const read = readSync(fd, buffer, 0, buffer.length, cached.offset);
				cached.offset += read;
				const parts = (cached.rest + buffer.subarray(0, read).toString("utf8")).split("\n");
				cached.rest = parts.pop() ?? "";
				for (const part of parts) {
					try {
						const value = JSON.parse(part);
						if (isSpendLine(value)) cached.lines.push(value);
					} catch {
						// A torn line: skipped.
					}
				}
			}
		} finally {
			closeSync(fd);
		}
		return cached.lines;
	}

	/**
	 * The spend of the lines that pass `keep`, over the days from `since` to `now`.
	 * @param {(line: SpendLine) => boolean} keep @param {number} since @param {number} now
	 * @returns {import("./budget.mjs").Spend}
	 */
	sum(keep, since, now) {
		let tokens = NO_SPEND.tokens;
		let cost = NO_SPEND.cost;
		const days = new Set([dayOf(now)]);
		for (let at = since; at < now && days.size < 62; at += 86_400_000) days.add(dayOf(at));
		for (const day of days) {
			for (const line of this.lines(day)) {
				if (!keep(line)) continue;
				tokens += line.tokens;
				cost += line.cost;
			}
		}
		return { tokens, cost };
	}
}
