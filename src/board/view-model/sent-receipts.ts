/**
 * Receipts of every run of a row: what the user sent to it and how each message went in (steer,
 * follow-up, answer), for the transcript's marks. Reads only; each receipt is shape-checked, a loose
 * or unreadable one is left out (the transcript is a view, the store says what is wrong elsewhere).
 * An ended run's receipts never change: they are read once.
 */
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { rowDirOf } from "../../../runner/store/store-layout.mjs";
import { readReceiptFile } from "../engine/store.ts";
import type { Receipt } from "../engine/types.ts";

const ENDED_CACHE = 256;
const ended = new Map<string, Receipt[]>();

function isDir(path: string): boolean {
	try {
		return lstatSync(path).isDirectory();
	} catch {
		return false;
	}
}

function runReceipts(runDir: string): Receipt[] {
	const dir = join(runDir, "receipts");
	if (!isDir(dir)) return [];
	const out: Receipt[] = [];
	for (const name of readdirSync(dir)) {
		if (!name.endsWith(".json")) continue;
		try {
			const receipt = readReceiptFile(join(dir, name));
			if (receipt) out.push(receipt);
		} catch {
			// Shape-checked elsewhere for people (the row's error); a view leaves it out.
		}
	}
	return out;
}

/** The row's receipts, oldest first: those of earlier runs, and those of its current run (read afresh). */
export function readRowReceipts(
	storeDir: string,
	rowId: string,
	currentRunId: string | undefined,
): { earlier: Receipt[]; current: Receipt[] } {
	const runs = join(rowDirOf(storeDir, rowId), "runs");
	if (!isDir(runs)) return { earlier: [], current: [] };
	const earlier: Receipt[] = [];
	const current: Receipt[] = [];
	for (const runId of readdirSync(runs)) {
		const runDir = join(runs, runId);
		if (!isDir(runDir)) continue;
		// Run ids sort by time: the current run and any newer than the row we were given are read afresh.
		if (!currentRunId || runId >= currentRunId) {
			current.push(...runReceipts(runDir));
			continue;
		}
		let kept = ended.get(runDir);
		if (!kept) {
			kept = runReceipts(runDir);
			if (ended.size >= ENDED_CACHE) ended.clear();
			ended.set(runDir, kept);
		}
		earlier.push(...kept);
	}
	const byTime = (a: Receipt, b: Receipt) => a.at - b.at;
	return { earlier: earlier.sort(byTime), current: current.sort(byTime) };
}
