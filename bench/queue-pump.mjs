// What a pump costs the settle step (an open board's tick): with runs waiting behind full slots a pump
// takes the queue's lock, lists the queue and finds the first target full. Prints the time of one such
// pump with 60 entries waiting, of one with an empty queue, and of one enqueue (each the median of
// many, with its spread). Run: node bench/queue-pump.mjs
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { enqueue, pumpQueue } from "../runner/life/queue.mjs";
import { processStartTime } from "../runner/store/proc.mjs";
import { runDirOf } from "../runner/store/store-layout.mjs";
import { load, spread } from "./_stats.mjs";

const WAITING = 60;
const ROUNDS = 2000;
const root = mkdtempSync(join(tmpdir(), "pab-bench-pump-"));

/** @param {() => void} fn @param {number} rounds */
function times(fn, rounds) {
	const out = [];
	for (let i = 0; i < rounds; i++) {
		const t0 = process.hrtime.bigint();
		fn();
		out.push(Number(process.hrtime.bigint() - t0) / 1e6);
	}
	return out;
}

try {
	const empty = join(root, "empty");
	mkdirSync(join(empty, "queue"), { recursive: true });
	const full = join(root, "full");
	// The only slot is held by this live process: every pump finds the local target full.
	mkdirSync(join(full, "slots"), { recursive: true });
	writeFileSync(
		join(full, "slots", "slot-0.json"),
		JSON.stringify({ pid: process.pid, start: processStartTime(process.pid), runId: "busy" }),
	);
	const rowIds = Array.from({ length: WAITING }, (_, i) => `r${i}`);
	for (const rowId of rowIds) {
		mkdirSync(runDirOf(full, rowId, `run-${rowId}`), { recursive: true });
		writeFileSync(join(runDirOf(full, rowId, `run-${rowId}`), "run.json"), "{}");
	}
	let n = 0;
	const enqueued = times(() => {
		const rowId = rowIds[n++] ?? "";
		enqueue(full, { rowId, runId: `run-${rowId}` });
	}, WAITING);
	const options = { maxConcurrent: 1, node: "/bin/false", env: {} };
	const waiting = times(() => pumpQueue(full, options), ROUNDS);
	const idle = times(() => pumpQueue(empty, options), ROUNDS);
	console.log(`pump, ${WAITING} entries waiting, slots full: ${spread(waiting)} (${load()})`);
	console.log(`pump, empty queue: ${spread(idle)}`);
	console.log(`enqueue: ${spread(enqueued)}`);
} finally {
	rmSync(root, { recursive: true, force: true });
}
