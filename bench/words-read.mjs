// What a watcher pays when a row's streamed words grow (#40): the board reads only that row's words
// (BoardService.words: what was appended to words.jsonl, checked and sanitised, and the run's status from
// the cache), not the row. The file is what a real
// WordsWriter appended for a long answer streamed in pi's small deltas, one append every WORDS_MS. Prints
// the first read's time, each later read's (what was appended since), and what they cost at 100 rows streaming at once, each reported every WORDS_MS (the most
// the runner writes). Medians with spread and the machine's load; asserts nothing.
// Run: node --experimental-strip-types bench/words-read.mjs [--reads 2000]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WORDS_MS, WordsWriter } from "../runner/live-words.mjs";
import { applyEvent, initialStatus } from "../runner/life/state-rules.mjs";
import { createEngineContext } from "../src/board/engine/engine-context.ts";
import { rowWithWords } from "../src/board/engine/row-words.ts";
import { load, pct, spread } from "./_stats.mjs";

const arg = (/** @type {string} */ name, /** @type {string} */ fallback) => {
	const i = process.argv.indexOf(name);
	return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const READS = Number(arg("--reads", "2000"));

const root = mkdtempSync(join(tmpdir(), "pab-bench-words-"));
try {
	const runDir = join(root, "rows", "bench-row", "runs", "run-1");
	mkdirSync(runDir, { recursive: true });
	// The run's status as its runner wrote it before the words: working, its text older.
	const status = initialStatus("run-1", "bench-row", 0);
	applyEvent(status, { type: "agent_start" }, 0);
	writeFileSync(join(runDir, "status.json"), JSON.stringify(status));
	const ctx = createEngineContext({ storeDir: root, piCommand: [process.execPath] });
	const writer = new WordsWriter({ runDir, storeDir: root, rowId: "bench-row" });
	writer.observe({ type: "message_start", message: { role: "assistant" } });
	// 4,000 words in deltas of about two tokens, each flushed on its own as a WORDS_MS mark would.
	for (let n = 0; n < 4000; n++) {
		writer.observe({ type: "message_update", assistantMessageEvent: { type: "text_delta", delta: `word${n} ` } });
		writer.flush();
	}
	/** @type {import("../src/board/engine/types.ts").BoardRow} */
	const row = {
		id: "bench-row",
		name: "bench row",
		cwd: root,
		sessionFile: join(root, "session.jsonl"),
		createdAt: 0,
		updatedAt: 0,
		pinned: false,
		archived: false,
		worktreeMode: "none",
		state: "working",
		alive: true,
		summary: "",
		lastActivityAt: 0,
		recentEvents: [],
		runDir,
		live: { text: "older words" },
	};
	const first = process.hrtime.bigint();
	let shown = rowWithWords(ctx, row);
	const firstMs = Number(process.hrtime.bigint() - first) / 1e6;
	// Each report after the first: the runner appended its next words, and the read takes just those.
	const times = [];
	for (let i = 0; i < READS; i++) {
		writer.observe({ type: "message_update", assistantMessageEvent: { type: "text_delta", delta: `more${i} ` } });
		writer.flush();
		const start = process.hrtime.bigint();
		shown = rowWithWords(ctx, row);
		times.push(Number(process.hrtime.bigint() - start) / 1e6);
	}
	writer.close();
	console.log(`a row's first words read (the file's last 4 KiB): ${firstMs.toFixed(2)} ms`);
	const perSecond = 100 * (1000 / WORDS_MS);
	console.log(`each later read (what the runner appended since): ${spread(times)} (${load()})`);
	console.log(
		`at 100 rows streaming, ${perSecond} reports a second: ${((pct(times, 50) * perSecond) / 10).toFixed(1)} % of a core (median read)`,
	);
	if (!shown.live?.text?.endsWith(`more${READS - 1} `)) throw new Error("the read did not find the newest words");
} finally {
	rmSync(root, { recursive: true, force: true });
}
