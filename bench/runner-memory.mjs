// Runner memory and events.jsonl size against the length of one streamed answer: the real runner and
// a real pi worker, the scripted "faux-bulk" model streaming 1, 4 and 20 MB of text as fast as pi takes
// it, in pi's usual 3-5 token deltas. Prints, per size, the runner's peak RSS (VmHWM, read until it
// exits) and events.jsonl / text, as medians with their spread over BENCH_RUNS runs, and the load.
// Run: node --experimental-strip-types bench/runner-memory.mjs   (BENCH_SIZES=1,4,20 BENCH_RUNS=3)
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { createBoardService } from "../src/board/engine/service.ts";
import { createTestAgent, PI_CLI } from "../test-support/pi-harness.ts";
import { load, pct } from "./_stats.mjs";

const SIZES = (process.env.BENCH_SIZES ?? "1,4,20").split(",").map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const MB = 1024 * 1024;

/** @param {number[]} values @param {number} digits */
const spreadOf = (values, digits) =>
	`median ${pct(values, 50).toFixed(digits)} (${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)}, n=${values.length})`;

/** Peak RSS of the run's runner in MB, read from /proc until the runner exits. @param {string} runDir */
async function watchRunner(runDir) {
	let pid = 0;
	let peakKb = 0;
	for (;;) {
		try {
			pid ||= JSON.parse(readFileSync(join(runDir, "runner.json"), "utf8")).pid;
			peakKb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? peakKb);
		} catch {
			if (pid) return peakKb / 1024;
		}
		await new Promise((r) => setTimeout(r, 20));
	}
}

const agent = createTestAgent({});
const board = createBoardService({
	storeDir: join(agent.root, "store"),
	piCommand: [process.execPath, PI_CLI],
	env: agent.env,
});
try {
	for (const size of SIZES) {
		const sentence = "The quick brown fox jumps over the lazy dog, again and again. ";
		const text = sentence.repeat(Math.ceil((size * MB) / sentence.length)).slice(0, size * MB);
		agent.writeScript({ rules: [], fallback: [{ text }] });
		/** @type {number[]} */
		const rss = [];
		/** @type {number[]} */
		const ratio = [];
		/** @type {number[]} */
		const seconds = [];
		for (let run = 0; run < RUNS; run++) {
			const started = Date.now();
			const row = await board.dispatch({
				prompt: `stream ${size} MB, run ${run}`,
				cwd: agent.cwd,
				model: "faux-bulk/bulk-1",
			});
			rss.push(await watchRunner(String(row.runDir)));
			seconds.push((Date.now() - started) / 1000);
			const done = await board.get(row.id);
			if (done?.state !== "completed") throw new Error(`run ended ${done?.state}: ${done?.error}`);
			ratio.push(statSync(join(String(row.runDir), "events.jsonl")).size / text.length);
		}
		console.log(
			`${size} MB streamed: runner peak RSS ${spreadOf(rss, 1)} MB; events.jsonl ${spreadOf(ratio, 2)} x the text; ${spreadOf(seconds, 1)} s per run (${load()})`,
		);
	}
} finally {
	agent.cleanup();
}
