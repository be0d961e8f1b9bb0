// The supervisor against its labelled corpus (tests/fixtures/supervisor-corpus.jsonl): per kind, how many
// questions are answered for the person and how many come to them, under `- always: answer "yes"` and
// under `- always: decide` with a model that says yes to everything; then what classifying costs per
// question (every question classified BENCH_ROUNDS times, default 20).
// Run: node bench/supervisor-corpus.mjs [corpus.jsonl]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { questionAction } from "../runner/supervisor/action.mjs";
import { formatCorpus, parseCorpus } from "../runner/supervisor/corpus.mjs";
import { load, spread } from "./_stats.mjs";

const path = process.argv[2] ?? join(import.meta.dirname, "..", "tests", "fixtures", "supervisor-corpus.jsonl");
const entries = parseCorpus(readFileSync(path, "utf8"), path);
console.log(formatCorpus(entries, path));

const rounds = Number(process.env.BENCH_ROUNDS ?? 20);
/** @type {number[]} */
const perQuestion = [];
for (let round = 0; round < rounds; round++) {
	const start = process.hrtime.bigint();
	for (const entry of entries)
		questionAction({ question: entry.question, ...(entry.options ? { options: entry.options } : {}) });
	perQuestion.push(Number(process.hrtime.bigint() - start) / 1e6 / entries.length);
}
console.log(`\nclassifying one question: ${spread(perQuestion)} over ${rounds} rounds of ${entries.length}; ${load()}`);
