// The board in a browser (#29) at 5,000 rows of a real store (one row from a real pi worker, cloned):
// the web server started by a real `pi -p "/agent-board serve"`, a real headless Chromium logged in.
// Prints: the first snapshot on the page; a store change (a rename, through the engine) -> the page's
// DOM, p50/p95; a real worker's streamed chunk -> its newest words on the page (the runner appends its
// words to words.jsonl at most every 25 ms), p50/p95; the server's idle CPU and RSS with the page open.
// Medians with spread and the machine's load; asserts nothing about time.
// Run: node --experimental-strip-types bench/web-board.mjs [--rows 5000] [--changes 40] [--idle-s 30]
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createBoardService } from "../src/board/engine/service.ts";
import { cloneRows } from "../test-support/clone-rows.ts";
import { chromiumMissing, launchBrowser } from "../test-support/browser.ts";
import { createTestAgent, PI_CLI, runPi } from "../test-support/pi-harness.ts";
import { liveRecord } from "../src/web/web-files.ts";
import { load, pct, spread } from "./_stats.mjs";
import { chunkLatencies, reach } from "./_stream.mjs";

/** @param {string} name @param {string} fallback */
const arg = (name, fallback) => {
	const i = process.argv.indexOf(name);
	return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const ROWS = Number(arg("--rows", "5000"));
const CHANGES = Number(arg("--changes", "40"));
const IDLE_S = Number(arg("--idle-s", "30"));
const words = `Start ${Array.from({ length: 400 }, (_, n) => `word${n}`).join(" ")} end.`;
const agent = createTestAgent({
	script: { rules: [{ match: "STREAM", steps: [{ text: words }] }], fallback: [{ text: "Bench row finished." }] },
});
const storeDir = join(agent.agentDir, "agent-board");
const service = createBoardService({ storeDir, env: agent.env, piCommand: [process.execPath, PI_CLI] });

/** The page records when what the bench waits for shows: a MutationObserver, installed before the page's own script. */
const OBSERVE = `(() => {
	window.__seen = [];
	window.__watch = undefined;
	window.__stream = [];
	new MutationObserver(() => {
		const at = Date.now();
		const w = window.__watch;
		if (w && !w.at && document.querySelector(w.selector)?.textContent === w.text) w.at = at;
		const s = window.__streamId && document.querySelector('li.row[data-id="' + window.__streamId + '"] .stream');
		if (s && s.textContent !== window.__stream.at(-1)?.text) window.__stream.push({ at, text: s.textContent });
	}).observe(document, { subtree: true, childList: true, characterData: true });
})()`;

/** utime + stime of a process, in clock ticks. @param {number} pid */
function cpuTicks(pid) {
	const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
	const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
	return Number(rest[11]) + Number(rest[12]);
}

/** @param {number} pid */
function rssMb(pid) {
	const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
	return match ? Number(match[1]) / 1024 : NaN;
}

/** @param {() => Promise<boolean>} check @param {number} timeoutMs @param {string} what */
async function until(check, timeoutMs, what) {
	const deadline = Date.now() + timeoutMs;
	while (!(await check())) {
		if (Date.now() > deadline) throw new Error(`bench: ${what} not reached in time`);
		await new Promise((r) => setTimeout(r, 50));
	}
}

const missing = chromiumMissing();
if (missing) {
	console.log(`skipped: ${missing}`);
	agent.cleanup();
	process.exit(0);
}

let browser;
try {
	const seed = await service.dispatch({ prompt: "seed row", cwd: agent.cwd });
	await until(async () => (await service.get(seed.id))?.state === "completed", 60_000, "the seed row");
	await until(
		async () =>
			!existsSync(join(String(seed.runDir), "runner.json")) || (await service.get(seed.id))?.alive === false,
		10_000,
		"the seed runner's end",
	);
	cloneRows(storeDir, seed.id, 1, ROWS, (n) => `bench row ${n}`);

	const served = await runPi(agent, {
		args: ["-p", "/agent-board serve --port 0"],
		env: { AGENT_BOARD_DIR: storeDir },
		timeoutMs: 120_000,
	});
	const login = /http:\/\/\S+\/login\?token=\S+/.exec(served.stdout)?.[0];
	const record = liveRecord(storeDir);
	if (!login || !record) throw new Error(`serve did not start: ${served.stderr}`);
	console.log(`web server pid ${record.pid} over ${ROWS.toLocaleString("en-US")} rows (${load()})`);

	browser = await launchBrowser({ width: 360, height: 740 });
	const page = browser.page;
	await page.addInitScript(OBSERVE);
	const opened = Date.now();
	await page.goto(login);
	// Polled through CDP: the page's CSP refuses Playwright's waitForFunction (it evaluates a string in the page).
	await until(
		async () =>
			Boolean(
				await page
					.evaluate(
						`document.querySelectorAll("li.row").length > 0 && !document.getElementById("counts").textContent.includes("loading")`,
					)
					.catch(() => false),
			),
		120_000,
		"the board on the page",
	);
	const snapshotBytes = await page.evaluate(`fetch("/api/rows").then((r) => r.text()).then((t) => t.length)`);
	console.log(
		`login -> the board on the page, ${ROWS.toLocaleString("en-US")} rows loaded: ${Date.now() - opened} ms; the rows as JSON: ${(Number(snapshotBytes) / 1e6).toFixed(2)} MB (${load()})`,
	);

	// A store change through the engine (rename: meta.json under the row lock, then notify/) -> the page's DOM.
	const latencies = [];
	for (let i = 0; i < CHANGES; i++) {
		const id = await page.evaluate(`document.querySelectorAll("li.row")[${i % 10}].dataset.id`);
		const name = `renamed ${i} ${Date.now()}`;
		await page.evaluate(
			`window.__watch = ${JSON.stringify({ selector: `li.row[data-id="${id}"] .name`, text: name })}`,
		);
		const start = Date.now();
		await service.rename(String(id), name);
		await until(async () => Boolean(await page.evaluate("window.__watch.at")), 10_000, "the rename on the page");
		latencies.push(Number(await page.evaluate("window.__watch.at")) - start);
		await new Promise((r) => setTimeout(r, 100));
	}
	console.log(
		`store change (rename through the engine) -> the page's DOM: p50 ${pct(latencies, 50)} ms, p95 ${pct(latencies, 95)} ms; ${spread(latencies)} (${load()})`,
	);

	// A real worker's streamed reply -> its newest words on the page (chunk times from events.jsonl, as board-scale measures).
	const row = await service.dispatch({ prompt: "STREAM now", cwd: agent.cwd, model: "faux-stream/stream-1" });
	await page.evaluate(`window.__streamId = ${JSON.stringify(row.id)}`);
	await until(async () => (await service.get(row.id))?.state === "completed", 120_000, "the streaming row");
	const seen = /** @type {{ at: number, text: string }[]} */ (await page.evaluate("window.__stream")).map((s) => ({
		at: s.at,
		length: reach(s.text, words),
	}));
	const chunks = chunkLatencies(String(row.runDir), seen);
	console.log(
		`streamed chunk (real worker) -> its newest words on the page: p50 ${pct(chunks, 50)} ms, p95 ${pct(chunks, 95)} ms (n=${chunks.length}, ${seen.length} page updates) (${load()})`,
	);

	// Idle: the page open (its event stream connected), nothing changing.
	await new Promise((r) => setTimeout(r, 3000));
	const slices = [];
	const hz = 100;
	for (let t = 0; t < IDLE_S; t += 5) {
		const before = cpuTicks(record.pid);
		await new Promise((r) => setTimeout(r, 5000));
		slices.push(((cpuTicks(record.pid) - before) / hz / 5) * 100);
	}
	console.log(
		`server idle with the page open, ${ROWS.toLocaleString("en-US")} rows, ${IDLE_S} s in 5 s slices: CPU ${spread(slices, "%")} of a core; RSS ${rssMb(record.pid).toFixed(1)} MB (${load()})`,
	);
	await runPi(agent, {
		args: ["-p", "/agent-board serve --stop"],
		env: { AGENT_BOARD_DIR: storeDir },
		timeoutMs: 60_000,
	});
} finally {
	await browser?.close();
	agent.cleanup();
}
