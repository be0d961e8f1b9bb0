// Board engine numbers: store read time for 500 rows (cold, unchanged), worker event -> status.json
// latency with the status write rate, and runner RSS. Run: node --experimental-strip-types bench/board-store.mjs
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createBoardService } from "../src/board/service.ts";
import { storePaths } from "../src/board/paths.ts";
import { writeMeta } from "../src/board/store.ts";
import { ensureDir, writeJsonAtomic } from "../runner/fs-util.mjs";
import { finalize, initialStatus, applyEvent } from "../runner/state-rules.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = mkdtempSync(join(tmpdir(), "pab-bench-"));
/** @param {number[]} values @param {number} p */
const pct = (values, p) => {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
/** @param {number} n */
const ms = (n) => `${n.toFixed(1)} ms`;

async function storeRead() {
	const storeDir = join(root, "store500");
	const paths = storePaths(storeDir);
	for (const dir of [paths.rows, paths.sessions, paths.slots]) ensureDir(dir);
	const now = Date.now();
	for (let i = 0; i < 500; i++) {
		const id = `row${String(i).padStart(4, "0")}`;
		const runId = `run-${i}`;
		ensureDir(paths.run(id, runId));
		writeMeta(paths, { version: 1, id, name: `task ${i}`, cwd: root, runCwd: root, sessionFile: paths.session(id), createdAt: now, updatedAt: now, pinned: false, archived: false, worktreeMode: "none", currentRunId: runId });
		const status = initialStatus(runId, id, now);
		applyEvent(status, { type: "message_end", message: { role: "assistant", content: [{ type: "text", text: `Finished task ${i}. All good.` }], stopReason: "stop" } }, now);
		applyEvent(status, { type: "agent_settled" }, now);
		writeJsonAtomic(join(paths.run(id, runId), "status.json"), finalize(status, { code: 0, signal: null, now }));
	}
	const service = createBoardService({ storeDir, piCommand: ["pi"] });
	let t = performance.now();
	const rows = await service.list();
	const cold = performance.now() - t;
	const warm = [];
	for (let i = 0; i < 10; i++) {
		t = performance.now();
		await service.list();
		warm.push(performance.now() - t);
	}
	const versions = [];
	for (let i = 0; i < 10; i++) {
		t = performance.now();
		await service.version();
		versions.push(performance.now() - t);
	}
	console.log(`store read, ${rows.length} rows: cold ${ms(cold)}, unchanged p50 ${ms(pct(warm, 50))}, version() p50 ${ms(pct(versions, 50))}`);
}

async function latencyAndRss() {
	const storeDir = join(root, "live");
	const service = createBoardService({ storeDir, piCommand: [process.execPath, join(here, "_fake-pi.mjs")] });
	const cwd = mkdtempSync(join(root, "cwd-"));
	const row = await service.dispatch({ prompt: "bench", cwd });
	const runDir = String(row.runDir);
	const statusPath = join(runDir, "status.json");
	const runnerPid = JSON.parse(readFileSync(join(runDir, "runner.json"), "utf8")).pid;
	/** @type {Array<{ seenAt: number, newest: number }>} time the poller saw a write, newest mark in it */
	const observed = [];
	let writes = 0;
	let lastMtime = 0;
	let firstWrite = 0;
	let lastWriteAt = 0;
	let rss = 0;
	for (;;) {
		let status;
		try {
			const mtime = statSync(statusPath).mtimeMs;
			if (mtime !== lastMtime) {
				lastMtime = mtime;
				status = JSON.parse(readFileSync(statusPath, "utf8"));
				if (status.state === "working") {
					writes += 1;
					firstWrite ||= Date.now();
					lastWriteAt = Date.now();
				}
				const mark = /^mark (\d+)$/.exec(status.latestAssistant ?? "");
				if (mark) observed.push({ seenAt: Date.now(), newest: Number(mark[1]) });
				if (!["queued", "working"].includes(status.state)) break;
			}
		} catch {
			// Mid-rename or not yet written.
		}
		try {
			const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${runnerPid}/status`, "utf8"))?.[1] ?? 0);
			rss = Math.max(rss, kb);
		} catch {
			// Runner gone.
		}
		await new Promise((r) => setTimeout(r, 2));
	}
	// Every emitted mark is visible once a write carrying it (or a newer one) lands.
	const marks = readFileSync(join(runDir, "events.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
		.filter((e) => e.type === "message_end").map((e) => Number(/mark (\d+)/.exec(e.message.text)?.[1]));
	const latencies = [];
	for (const emitted of marks) {
		const hit = observed.find((o) => o.newest >= emitted);
		if (hit) latencies.push(hit.seenAt - emitted);
	}
	const seconds = Math.max(0.001, (lastWriteAt - firstWrite) / 1000);
	console.log(`event -> status.json latency over ${latencies.length} marks (every 100 ms, deltas every 20 ms): p50 ${ms(pct(latencies, 50))}, p95 ${ms(pct(latencies, 95))}, max ${ms(Math.max(...latencies))}`);
	console.log(`status writes while working: ${writes} in ${seconds.toFixed(1)} s = ${((writes - 1) / seconds).toFixed(2)}/s between first and last`);
	console.log(`runner peak RSS: ${(rss / 1024).toFixed(1)} MB`);
}

try {
	await storeRead();
	await latencyAndRss();
} finally {
	rmSync(root, { recursive: true, force: true });
}
