// The whole of issue #19's table in one run, at 500, 5,000 and 20,000 rows of a real engine store (one
// real row from a real pi worker, cloned): one changed row -> repainted; a streamed chunk from a real
// worker -> on the real dashboard's screen; the safety pass; first open; pi start-up with the whole
// package; footer counts at pi start; /agent-board list with 20 worktree rows; pi's memory with the
// board open. Medians with spread and the machine's load; asserts nothing about time.
// Run: node --experimental-strip-types --expose-gc bench/board-scale.mjs [--rows 500,5000,20000] [--start-runs 7] [--no-start] [--no-list] [--start-only]
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KeybindingsManager, TUI_KEYBINDINGS } from "@earendil-works/pi-tui";
import { Board } from "../src/board/dashboard/board.ts";
import { createEngineContext } from "../src/board/engine/engine-context.ts";
import { liveRows } from "../src/board/engine/row-read.ts";
import { createBoardService } from "../src/board/engine/service.ts";
import { safetyPoll } from "../src/board/engine/store-poll.ts";
import { BoardFeed } from "../src/board/view-model/feed.ts";
import { cloneRows } from "../test-support/clone-rows.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { createTestAgent, PI_CLI, runPi } from "../test-support/pi-harness.ts";
import { repaintOneRow } from "./_repaint.mjs";
import { load, pct, spread } from "./_stats.mjs";
import { chunkLatencies, reach } from "./_stream.mjs";

/** @param {string} name @param {string} fallback */
const arg = (name, fallback) => {
	const i = process.argv.indexOf(name);
	return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
// --start-only: the start-up ratios alone, on a store of one row.
const START_ONLY = process.argv.includes("--start-only");
const SIZES = START_ONLY ? [] : arg("--rows", "500,5000,20000").split(",").map(Number);
const START_RUNS = Number(arg("--start-runs", "7"));
const gc = /** @type {(() => void) | undefined} */ (globalThis.gc);
const words = `Start ${Array.from({ length: 400 }, (_, n) => `word${n}`).join(" ")} end.`;
const agent = createTestAgent({
	script: { rules: [{ match: "STREAM", steps: [{ text: words }] }], fallback: [{ text: "Bench row finished." }] },
});
const storeDir = join(agent.agentDir, "agent-board");
const piCommand = [process.execPath, PI_CLI];
const service = createBoardService({ storeDir, env: agent.env, piCommand });
const ms = (/** @type {number} */ n) => `${n.toFixed(n < 10 ? 2 : 0)} ms`;

try {
	const seed = await service.dispatch({ prompt: "seed row", cwd: agent.cwd });
	await until(async () => (await service.get(seed.id))?.state === "completed", 60_000);
	await until(
		async () =>
			!existsSync(join(String(seed.runDir), "runner.json")) || (await service.get(seed.id))?.alive === false,
		10_000,
	);
	let count = 1;
	/** @type {Record<number, { heap: number, rss: number }>} */
	const memory = {};
	for (const size of SIZES) {
		if (count < size) cloneRows(storeDir, seed.id, count, size, (n) => `bench row ${n}`);
		count = Math.max(count, size);
		console.log(`\n== ${size.toLocaleString("en-US")} rows (${load()}) ==`);
		memory[size] = await atSize(size, seed.id);
	}
	const [small, large] = [SIZES[0] ?? 0, SIZES.at(-1) ?? 0];
	const a = memory[small];
	const b = memory[large];
	if (a && b && large > small)
		console.log(
			`\nmemory a row costs with the board open (heap ${gc ? "after gc" : "without gc: run with --expose-gc"}, ${small} -> ${large} rows): ${((b.heap - a.heap) / (large - small) / 1024).toFixed(2)} KB; RSS ${((b.rss - a.rss) / (large - small) / 1024).toFixed(2)} KB`,
		);
	if (!process.argv.includes("--no-start")) await startup(count);
	if (!process.argv.includes("--no-list") && !START_ONLY) await worktreeList();
} finally {
	agent.cleanup();
}

/** @param {number} size @param {string} seedId */
async function atSize(size, seedId) {
	// First open: a fresh engine (cold caches) and feed; the time to the first frame, then to every row.
	const opens = [];
	const fills = [];
	for (let i = 0; i < 3; i++) {
		const fresh = createBoardService({ storeDir, env: agent.env, piCommand });
		const feed = new BoardFeed(() => fresh);
		const board = makeBoard(fresh, feed);
		const start = performance.now();
		await board.start();
		board.render(120);
		opens.push(performance.now() - start);
		if (i === 0) {
			await feed.fill().done;
			fills.push(performance.now() - start);
		}
		board.dispose();
		feed.stop();
	}
	console.log(
		`first open, to the first frame (fresh engine): ${spread(opens)}; every row loaded (in idle slices after it) ${ms(fills[0] ?? NaN)}`,
	);

	// The board open on every row: memory, then changes.
	const feed = new BoardFeed(() => service);
	const repaints = { count: 0 };
	const board = makeBoard(service, feed, () => (repaints.count += 1));
	await board.start();
	await feed.fill().done;
	board.render(120);
	gc?.();
	const mem = { heap: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss };
	console.log(
		`memory with the board open: heap ${(mem.heap / 1048576).toFixed(1)} MB, RSS ${(mem.rss / 1048576).toFixed(1)} MB`,
	);

	const { repaint, changed, perRepaint } = await repaintOneRow(board, feed, storeDir, seedId);
	console.log(
		`one changed row -> repainted, UI: ${spread(repaint)}; with its get: ${spread(changed)}; rows formatted per repaint ${perRepaint.toFixed(0)} of ${size}`,
	);

	board.dispose();
	// A board just opened (its selection on the first row, where a new working row is listed).
	const watching = makeBoard(service, feed);
	await watching.start();
	await streamToScreen(feed, watching);
	watching.dispose();
	feed.stop();

	// The safety pass (every 10 s while watched) and the footer counts at pi start (a fresh engine each).
	const ctx = createEngineContext({ storeDir, env: agent.env, piCommand });
	const pass = safetyPoll(ctx);
	await pass({ delivered: 1 });
	const passes = [];
	for (let i = 0; i < 20; i++) {
		const start = performance.now();
		await pass({ delivered: 1 });
		passes.push(performance.now() - start);
	}
	const counts = [];
	for (let i = 0; i < 20; i++) {
		const start = performance.now();
		liveRows(createEngineContext({ storeDir, env: agent.env, piCommand }));
		counts.push(performance.now() - start);
	}
	console.log(
		`safety pass: ${spread(passes)}; footer counts at pi start (live summary, fresh engine): ${spread(counts)}`,
	);
	return mem;
}

/** A streamed reply from a real worker -> its newest words on the open board's screen. @param {BoardFeed} feed @param {Board} board */
async function streamToScreen(feed, board) {
	const row = await service.dispatch({ prompt: "STREAM now", cwd: agent.cwd, model: "faux-stream/stream-1" });
	/** @type {{ at: number, length: number }[]} */
	const seen = [];
	const unsubscribe = feed.subscribe(() => {
		// What pi does on requestRender: the next frame.
		setImmediate(() => {
			const length = reach(board.render(200).find((l) => l.includes("word")) ?? "", words);
			if (length) seen.push({ at: Date.now(), length });
		});
	});
	await until(async () => (await service.get(row.id))?.state === "completed", 120_000);
	unsubscribe();
	if (process.env.BENCH_DEBUG)
		console.log("seen", seen.length, JSON.stringify(seen.slice(0, 3)), board.render(200).slice(0, 6).join("\n"));
	const latencies = chunkLatencies(String(row.runDir), seen);
	console.log(
		`streamed chunk (real worker) -> newest words on the board's screen: p50 ${pct(latencies, 50)} ms, p95 ${pct(latencies, 95)} ms (n=${latencies.length})`,
	);
}

/**
 * pi -p "hi" with no extension, an empty one and the whole package, interleaved in one run (the order
 * turns each round, so none always comes first), the store holding `rows` rows. The package's own part is
 * package/empty: what loading any extension costs pi (jiti, the loader) is in empty/none.
 * @param {number} rows
 */
async function startup(rows) {
	const env = { AGENT_BOARD_DIR: storeDir };
	const empty = join(agent.root, "empty-extension.ts");
	writeFileSync(empty, "export default function emptyExtension(): void {}\n");
	const args = ["-p", "--no-session", "--", "hi"];
	/** @type {Record<string, { withExtension: boolean, args: string[] }>} */
	const kinds = {
		none: { withExtension: false, args },
		empty: { withExtension: false, args: ["-e", empty, ...args] },
		package: { withExtension: true, args },
	};
	const names = Object.keys(kinds);
	/** @type {Record<string, number[]>} */
	const times = Object.fromEntries(names.map((name) => [name, []]));
	const once = async (/** @type {string} */ name) => {
		const kind = kinds[name];
		if (!kind) throw new Error(name);
		const start = performance.now();
		const result = await runPi(agent, { ...kind, env, timeoutMs: 120_000 });
		if (result.code !== 0) throw new Error(`pi (${name}) exited ${result.code}: ${result.stderr}`);
		return performance.now() - start;
	};
	const loadBefore = load();
	for (const name of names) await once(name);
	for (let i = 0; i < START_RUNS; i++) {
		for (let k = 0; k < names.length; k++) {
			const name = names[(i + k) % names.length] ?? "none";
			times[name]?.push(await once(name));
		}
	}
	const ratio = (/** @type {string} */ a, /** @type {string} */ b) => {
		const values = (times[a] ?? []).map((t, i) => t / (times[b]?.[i] ?? t));
		return `${a}/${b} median ${pct(values, 50).toFixed(3)} (p5-p95 ${pct(values, 5).toFixed(3)}-${pct(values, 95).toFixed(3)}, n=${values.length})`;
	};
	console.log(
		`\npi -p "hi" start-up, ${rows.toLocaleString("en-US")}-row store (${loadBefore} before, ${load()} after): none ${spread(times.none ?? [])}; empty extension ${spread(times.empty ?? [])}; package ${spread(times.package ?? [])}`,
	);
	console.log(
		`start-up ratios per interleaved round: ${ratio("package", "none")}; ${ratio("empty", "none")}; ${ratio("package", "empty")}`,
	);
}

/** /agent-board list with 20 worktree rows: time and git processes, first and repeated, and in a new process. */
async function worktreeList() {
	const repo = initRepo(join(agent.root, "repo"), { "shared.txt": "base\n" });
	const rows = [];
	for (let i = 0; i < 20; i++)
		rows.push(await service.dispatch({ prompt: `worktree row ${i}`, cwd: repo, worktreeMode: "worktree" }));
	for (const row of rows) await until(async () => (await service.get(row.id))?.alive === false, 120_000);
	const bin = join(agent.root, "gitbin");
	const log = join(agent.root, "git.log");
	mkdirSync(bin, { recursive: true });
	const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
	writeFileSync(join(bin, "git"), `#!/bin/sh\necho x >> '${log}'\nexec '${realGit}' "$@"\n`);
	chmodSync(join(bin, "git"), 0o755);
	const spawns = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0);
	const saved = process.env.PATH;
	process.env.PATH = `${bin}:${saved}`;
	try {
		/** @param {string} label @param {() => ReturnType<typeof createBoardService>} make */
		const timed = async (label, make) => {
			const before = spawns();
			const start = performance.now();
			await make().list();
			return `${label} ${ms(performance.now() - start)}, ${spawns() - before} git`;
		};
		const fresh = createBoardService({ storeDir, env: agent.env, piCommand });
		const out = [
			await timed("first", () => fresh),
			await timed("repeat", () => fresh),
			await timed("new process", () => createBoardService({ storeDir, env: agent.env, piCommand })),
		];
		console.log(`\n/agent-board list, 20 worktree rows + the store (${load()}): ${out.join("; ")}`);
	} finally {
		process.env.PATH = saved;
	}
}

/** @param {ReturnType<typeof createBoardService>} svc @param {BoardFeed} feed @param {() => void} [onRender] */
function makeBoard(svc, feed, onRender) {
	const tui = /** @type {import("@earendil-works/pi-tui").TUI} */ (
		/** @type {unknown} */ ({ requestRender() {}, terminal: { rows: 50 } })
	);
	const theme = {
		fg: (/** @type {string} */ _c, /** @type {string} */ text) => `\x1b[38;5;110m${text}\x1b[39m`,
		bold: (/** @type {string} */ text) => `\x1b[1m${text}\x1b[22m`,
	};
	return new Board({
		service: svc,
		feed,
		tui,
		theme,
		keys: new KeybindingsManager(TUI_KEYBINDINGS),
		requestRender: () => onRender?.(),
		done: () => undefined,
		height: () => 50,
		cwd: agent.cwd,
		models: [],
		prefs: {},
		savePrefs: async () => undefined,
		readTranscript: async () => [],
		readDiff: async () => [],
		tickMs: 3_600_000,
	});
}

/** @param {() => Promise<boolean>} check @param {number} timeoutMs */
async function until(check, timeoutMs) {
	const deadline = Date.now() + timeoutMs;
	while (!(await check())) {
		if (Date.now() > deadline) throw new Error("bench: condition not met in time");
		await new Promise((r) => setTimeout(r, 100));
	}
}
