// What watching the board costs, at 500, 5,000 and 20,000 rows of a real engine store:
// - first open: the full list and the first frame (only the rows on screen are formatted);
// - an unchanged check: what the UI does when nothing changed (the 1 s tick's repaint; the feed does
//   no store work at all), and the engine's per-row store hash version() (on demand only);
// - one changed row -> repainted: the board places that row and formats the window (UI only), and
//   end to end: its report re-reads that row (service.get), then the repaint;
// - pi's CPU over 30 s with the board open and idle, and closed (real pi in tmux, /proc stat).
// Prints medians and spread with the machine's load; asserts nothing about time.
// Run: node bench/dashboard-poll.mjs [--rows 500,5000,20000] [--cpu-seconds 30] [--no-cpu]
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createBoardService } from "../src/board/engine/service.ts";
import { BoardFeed } from "../src/board/view-model/feed.ts";
import { repaintOneRow } from "./_repaint.mjs";
import { load, spread } from "./_stats.mjs";
import { cloneRows } from "../test-support/clone-rows.ts";
import { createTestAgent, EXTENSION_ENTRY, PI_CLI } from "../test-support/pi-harness.ts";
import { startPiInTmux } from "../test-support/tmux.ts";
import { boardOn } from "../test-support/board-on.ts";

/** @param {string} name @param {string} fallback */
const arg = (name, fallback) => {
	const i = process.argv.indexOf(name);
	return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const SIZES = arg("--rows", "500,5000,20000").split(",").map(Number);
const CPU_SECONDS = Number(arg("--cpu-seconds", "30"));
const WITH_CPU = !process.argv.includes("--no-cpu");

const agent = createTestAgent({ script: { rules: [], fallback: [{ text: "Bench row finished." }] } });
const storeDir = join(agent.agentDir, "agent-board");
const service = createBoardService({
	storeDir,
	env: agent.env,
	piCommand: [process.execPath, PI_CLI, "-e", EXTENSION_ENTRY],
});

try {
	// One real row from a real worker, then cloned so every row has real engine files.
	const seed = await service.dispatch({ prompt: "seed row", cwd: agent.cwd });
	const deadline = Date.now() + 60_000;
	while ((await service.get(seed.id))?.state !== "completed") {
		if (Date.now() > deadline) throw new Error("seed row did not complete");
		await new Promise((r) => setTimeout(r, 200));
	}
	let count = 1;
	for (const size of SIZES) {
		if (count < size) cloneRows(storeDir, seed.id, count, size, (n) => `bench row ${n}`);
		count = Math.max(count, size);
		console.log(`\n== ${size} rows (${load()}) ==`);
		await measureInProcess(size, seed.id);
		if (WITH_CPU) await measureCpu(size);
	}
} finally {
	agent.cleanup();
}

/** @param {number} size @param {string} seedId */
async function measureInProcess(size, seedId) {
	const feed = new BoardFeed(() => service);
	const theme = {
		fg: (/** @type {string} */ _c, /** @type {string} */ text) => `\x1b[38;5;110m${text}\x1b[39m`,
		bold: (/** @type {string} */ text) => `\x1b[1m${text}\x1b[22m`,
	};
	const { dash: board } = boardOn(service, { rows: 50, cwd: agent.cwd, feed, theme, tickMs: 3_600_000 });
	// The engine's full list first (the feed's fill), then the board's own part: the list model (a sort) and the first frame.
	const t0 = performance.now();
	await feed.fill().done;
	const listed = performance.now() - t0;
	const t1 = performance.now();
	await board.start();
	board.render(120);
	const firstOpen = performance.now() - t1;
	const openFormatted = board.list.window.formatted;
	if (board.list.model.rowCount !== size) throw new Error(`expected ${size} rows, got ${board.list.model.rowCount}`);

	const tick = repeat(200, () => {
		board.invalidate();
		board.render(120);
	});
	const version = [];
	for (let i = 0; i < 20; i++) {
		const start = performance.now();
		await service.version();
		version.push(performance.now() - start);
	}
	const { repaint, changed, perRepaint } = await repaintOneRow(board, feed, storeDir, seedId);
	board.dispose();
	feed.stop();
	console.log(
		`first open: engine list ${listed.toFixed(1)} ms, then the board (model + first frame) ${firstOpen.toFixed(1)} ms; rows formatted: ${openFormatted} of ${size}`,
	);
	console.log(`unchanged check, UI (tick repaint):     ${spread(tick)}   (store reads: none)`);
	console.log(
		`unchanged check, engine version():      ${spread(version)}   (on demand only: nothing runs it periodically)`,
	);
	console.log(
		`one changed row -> repainted (UI only): ${spread(repaint)}; rows formatted per repaint: ${perRepaint.toFixed(0)} of ${size}`,
	);
	console.log(`one changed row -> repainted (get + UI): ${spread(changed)}`);
}

/** CPU of the pi process over the window, as % of one core, in 5 s slices (median and range). */
/** @param {number} size */
async function measureCpu(size) {
	const tmux = startPiInTmux(agent, { width: 120, height: 40 });
	try {
		await tmux.waitForText(/\d+(\.\d+)?%|ponytail/, 30_000);
		const pid = Number(execTmux(tmux.socket, ["display-message", "-p", "-t", "main", "#{pane_pid}"]).trim());
		await sleep(3000);
		const closed = await sample(pid);
		tmux.type("/agent-board");
		tmux.keys("Enter");
		await tmux.waitForText("Agent board", 60_000);
		await sleep(3000);
		const open = await sample(pid);
		console.log(`pi CPU, board closed, ${CPU_SECONDS} s:       ${cpuStats(closed)}`);
		console.log(`pi CPU, board open and idle, ${CPU_SECONDS} s: ${cpuStats(open)}`);
	} finally {
		tmux.kill();
	}
	void size;
}

/** @param {number} pid */
async function sample(pid) {
	const slices = [];
	const hz = 100;
	const slice = 5;
	for (let elapsed = 0; elapsed < CPU_SECONDS; elapsed += slice) {
		const before = cpuTicks(pid);
		await sleep(slice * 1000);
		slices.push(((cpuTicks(pid) - before) / hz / slice) * 100);
	}
	return slices;
}

/** @param {number} pid */
function cpuTicks(pid) {
	// The tmux pane runs `env` which execs node: the pane pid is pi itself.
	const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
	return Number(fields[11]) + Number(fields[12]);
}

/** @param {string} socket @param {string[]} args */
function execTmux(socket, args) {
	return execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
}

/** @param {number} n @param {() => void} fn */
function repeat(n, fn) {
	for (let i = 0; i < 20; i++) fn();
	const out = [];
	for (let i = 0; i < n; i++) {
		const start = performance.now();
		fn();
		out.push(performance.now() - start);
	}
	return out;
}

/** @param {number[]} values */
function cpuStats(values) {
	const s = [...values].sort((a, b) => a - b);
	return `median ${(s[Math.floor(s.length / 2)] ?? 0).toFixed(2)} % of a core (min ${(s[0] ?? 0).toFixed(2)}, max ${(s.at(-1) ?? 0).toFixed(2)}, ${s.length} x 5 s)`;
}

/** @param {number} ms */
function sleep(ms) {
	return new Promise((r) => setTimeout(r, ms));
}
