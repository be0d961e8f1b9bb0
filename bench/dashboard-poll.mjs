// Dashboard cost with 500 rows in a real engine store: a poll with nothing changed (must stat
// only, no row file read) and a keypress re-render. Prints numbers; asserts nothing about time.
// Run: node --experimental-strip-types bench/dashboard-poll.mjs
import fs, { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import { KeybindingsManager, TUI_KEYBINDINGS } from "@earendil-works/pi-tui";
import { createBoardService } from "../src/board/service.ts";
import { Dashboard } from "../src/board/ui/dashboard.ts";
import { createTestAgent, EXTENSION_ENTRY, PI_CLI } from "../test-support/pi-harness.ts";

const ROWS = 500;
const agent = createTestAgent({ script: { rules: [], fallback: [{ text: "Bench row finished." }] } });
const storeDir = join(agent.agentDir, "agent-board");
const service = createBoardService({ storeDir, env: agent.env, piCommand: [process.execPath, PI_CLI, "-e", EXTENSION_ENTRY] });

try {
	// One real row from a real worker, then cloned so all 500 rows have real engine files.
	const seed = await service.dispatch({ prompt: "seed row", cwd: agent.cwd });
	const deadline = Date.now() + 60_000;
	while ((await service.get(seed.id))?.state !== "completed") {
		if (Date.now() > deadline) throw new Error("seed row did not complete");
		await new Promise((r) => setTimeout(r, 200));
	}
	const rowsDir = join(storeDir, "rows");
	for (let i = 1; i < ROWS; i++) {
		const id = `${seed.id}-c${i}`;
		cpSync(join(rowsDir, seed.id), join(rowsDir, id), { recursive: true });
		cpSync(join(storeDir, "sessions", `${seed.id}.jsonl`), join(storeDir, "sessions", `${id}.jsonl`));
		rewriteIds(join(rowsDir, id), seed.id, id, i);
	}

	const theme = { fg: (/** @type {string} */ _c, /** @type {string} */ text) => `\x1b[38;5;110m${text}\x1b[39m`, bold: (/** @type {string} */ text) => `\x1b[1m${text}\x1b[22m` };
	const dash = new Dashboard({
		service,
		theme,
		keys: new KeybindingsManager(TUI_KEYBINDINGS),
		requestRender: () => undefined,
		done: () => undefined,
		height: () => 50,
		cwd: agent.cwd,
		models: [],
		prefs: {},
		savePrefs: async () => undefined,
		readTranscript: async () => [],
		readDiff: async () => [],
	});
	const t0 = performance.now();
	await dash.poll();
	const firstLoad = performance.now() - t0;
	if (dash.rows.length !== ROWS) throw new Error(`expected ${ROWS} rows, got ${dash.rows.length}`);

	// Count file reads during unchanged polls: fs is patched and re-synced into ESM named imports.
	let reads = 0;
	const original = fs.readFileSync;
	fs.readFileSync = /** @type {typeof fs.readFileSync} */ (
		/** @param {Parameters<typeof fs.readFileSync>} args */
		(...args) => {
			reads += 1;
			return original(...args);
		}
	);
	syncBuiltinESMExports();
	const polls = [];
	for (let i = 0; i < 50; i++) {
		const start = performance.now();
		const changed = await dash.poll();
		polls.push(performance.now() - start);
		if (changed) throw new Error("poll saw a change in an unchanged store");
	}
	fs.readFileSync = original;
	syncBuiltinESMExports();

	// Warm-up presses first, so the numbers are steady-state, not JIT compilation.
	for (let i = 0; i < 100; i++) {
		dash.handleInput(i % 100 < 50 ? "\x1b[B" : "\x1b[A");
		dash.render(120);
	}
	const keys = [];
	for (let i = 0; i < 500; i++) {
		const start = performance.now();
		dash.handleInput(i % 100 < 50 ? "\x1b[B" : "\x1b[A");
		dash.render(120);
		keys.push(performance.now() - start);
	}
	const filterStart = performance.now();
	dash.handleInput("/");
	dash.handleInput("c");
	dash.render(120);
	const filterKey = performance.now() - filterStart;

	console.log(`rows in store:                 ${ROWS}`);
	console.log(`first load (list + render):    ${firstLoad.toFixed(1)} ms`);
	console.log(`poll, nothing changed:         median ${median(polls).toFixed(2)} ms, p95 ${p95(polls).toFixed(2)} ms (target <= 10 ms)`);
	console.log(`row files read by 50 polls:    ${reads} (target 0)`);
	console.log(`keypress re-render (120 cols): median ${median(keys).toFixed(2)} ms, p95 ${p95(keys).toFixed(2)} ms (target <= 16 ms)`);
	console.log(`filter keypress re-render:     ${filterKey.toFixed(2)} ms`);
} finally {
	agent.cleanup();
}

/** @param {string} dir @param {string} from @param {string} to @param {number} n */
function rewriteIds(dir, from, to, n) {
	for (const entry of readdirSync(dir, { withFileTypes: true })) {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) rewriteIds(path, from, to, n);
		else if (entry.name.endsWith(".json")) {
			let text = readFileSync(path, "utf8").split(from).join(to);
			if (entry.name === "meta.json") text = text.replace('"name": "seed row"', `"name": "bench row ${n}"`).replace('"name":"seed row"', `"name":"bench row ${n}"`);
			writeFileSync(path, text);
		}
	}
}

/** @param {number[]} values */
function median(values) {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** @param {number[]} values */
function p95(values) {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] ?? 0;
}
