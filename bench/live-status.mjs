// Live view through the real runner and a real pi worker streaming from the scripted slow model:
// time from a streamed chunk reaching the runner to its text being in status.json, status writes per
// second while streaming (target <= 4), and whether every write carried something visible.
// Run: node --experimental-strip-types bench/live-status.mjs
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { visibleKey } from "../runner/life/state-rules.mjs";
import { createBoardService } from "../src/board/engine/service.ts";
import { createTestAgent, PI_CLI } from "../test-support/pi-harness.ts";
import { load, spread } from "./_stats.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const text = `Start ${Array.from({ length: 400 }, (_, n) => `word${n}`).join(" ")} end.`;
const agent = createTestAgent({ script: { rules: [], fallback: [{ text }] } });
const board = createBoardService({
	storeDir: join(agent.root, "store"),
	piCommand: [process.execPath, PI_CLI],
	env: agent.env,
});

/** @type {number[]} */
const latencies = [];
/** @type {number[]} */
const rates = [];
let writes = 0;
let invisible = 0;
let peakRssKb = 0;
try {
	for (let run = 0; run < RUNS; run++) {
		const row = await board.dispatch({ prompt: `stream ${run}`, cwd: agent.cwd, model: "faux-stream/stream-1" });
		const runDir = String(row.runDir);
		const statusPath = join(runDir, "status.json");
		/** @type {Array<{ at: number, length: number }>} */
		const seen = [];
		/** @type {number[]} */
		const streamingWrites = [];
		let lastIno = 0;
		let lastKey = "";
		for (;;) {
			let status;
			try {
				const stat = statSync(statusPath);
				if (stat.ino !== lastIno) {
					lastIno = stat.ino;
					status = JSON.parse(readFileSync(statusPath, "utf8"));
					const key = visibleKey(status);
					if (key === lastKey) invisible += 1;
					lastKey = key;
					writes += 1;
					if (status.live?.text) {
						// The status keeps a bounded tail; where it ends in the full text is how far the stream got.
						const index = text.indexOf(status.live.text);
						if (index >= 0) seen.push({ at: Date.now(), length: index + status.live.text.length });
						streamingWrites.push(Date.now());
					}
					if (status.endedAt) break;
				}
			} catch {
				// Mid-rename.
			}
			try {
				const pid = JSON.parse(readFileSync(join(runDir, "runner.json"), "utf8")).pid;
				peakRssKb = Math.max(
					peakRssKb,
					Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0),
				);
			} catch {
				// Not started or gone.
			}
			await new Promise((r) => setTimeout(r, 2));
		}
		// Each text delta as the runner received it, with the streamed length it completes.
		let length = 0;
		for (const line of readFileSync(join(runDir, "events.jsonl"), "utf8").split("\n")) {
			if (!line) continue;
			const event = JSON.parse(line);
			if (event.type === "message_start" && event.message?.role === "assistant") length = 0;
			if (event.type !== "message_update" || typeof event.delta !== "string") continue;
			length += event.delta.length;
			const hit = seen.find((s) => s.length >= length);
			if (hit) latencies.push(hit.at - event.at);
		}
		const first = streamingWrites[0] ?? 0;
		const last = streamingWrites.at(-1) ?? 0;
		if (streamingWrites.length > 1) rates.push((streamingWrites.length - 1) / ((last - first) / 1000));
	}
	console.log(`streamed chunk -> its text in status.json: ${spread(latencies)} (${load()})`);
	console.log(
		`status writes per second while streaming: ${spread(rates, "/s")}; ${writes} writes, ${invisible} without a visible change`,
	);
	console.log(`runner peak RSS: ${(peakRssKb / 1024).toFixed(1)} MB`);
} finally {
	agent.cleanup();
}
