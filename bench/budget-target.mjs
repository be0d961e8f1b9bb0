// How close a budget holds on every kind of row place (#36), through the board as a user dispatches: this
// machine, an ssh target over loopback (sshd on 127.0.0.1, a second Unix user), a pool's member (that
// host), a podman container target on this machine and one on a remote engine (bench/_kinds.mjs; a kind
// whose prerequisite is missing is left out, saying why). Each run has a row budget (a different one each
// time, 15-token requests), and is measured when it pauses: the tokens past the limit, and the model
// requests past the one that crossed it (there should be none). Also what the turn-end hold costs between
// turns: a worker's turn_end (its events, mirrored here for a target's row) to the next model request.
// Needs root and sshd. Run:
// nice -n 10 node --experimental-strip-types bench/budget-target.mjs   (BENCH_RUNS runs of each, default 10)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../test-support/pi-harness.ts";
import { sshdMissing } from "../test-support/requires.ts";
import { startKinds } from "./_kinds.mjs";
import { load, spread } from "./_stats.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const STEPS = 12;
const TOKENS_PER_REQUEST = 15;
const missing = sshdMissing();
if (missing) {
	console.log(`skipped: ${missing}`);
	process.exit(0);
}

console.log(load());
const steps = [
	...Array.from({ length: STEPS }, (_, i) => ({ toolCall: { name: "bash", args: { command: `echo ${i}` } } })),
	{ text: "done" },
];
const { model, repo, board, kinds, cleanup } = await startKinds("pab-bench-budget-", {
	script: { rules: [{ match: "BENCH", steps }] },
});

let n = 0;
/** @param {string | undefined} target @param {number} limit */
async function oneRun(target, limit) {
	n += 1;
	const prompt = `BENCH-${n}`;
	const row = await board.dispatch({ prompt, cwd: repo, budget: { tokens: limit }, ...(target ? { target } : {}) });
	const paused = await waitFor(
		async () => {
			const r = await board.get(row.id);
			return r?.state === "needs_input" && r.budget?.paused ? r : undefined;
		},
		`${prompt} to pause`,
		180_000,
		20,
	);
	// Settled a moment: a request past the pause would show in the model's log.
	await new Promise((resolve) => setTimeout(resolve, 2000));
	const requests = model.requests().filter((r) => r.prompt === prompt);
	const crossing = Math.ceil(limit / TOKENS_PER_REQUEST);
	const ends = readFileSync(join(paused.runDir ?? "", "events.jsonl"), "utf8")
		.split("\n")
		.filter(Boolean)
		.map((line) => JSON.parse(line))
		.filter((event) => event.type === "turn_end")
		.map((event) => event.at);
	// A turn's end -> the next request (the hold, then pi's next call).
	const gaps = ends.slice(0, requests.length - 1).map((at, i) => (requests[i + 1]?.at ?? at) - at);
	await board.stop(row.id);
	return { past: (paused.budget?.spent ?? 0) - limit, extra: requests.length - crossing, gaps };
}

/** @param {string | undefined} target */
async function series(target) {
	await oneRun(target, 100);
	const past = [];
	const extra = [];
	const gaps = [];
	for (let i = 0; i < RUNS; i++) {
		const result = await oneRun(target, 31 + 13 * i);
		past.push(result.past);
		extra.push(result.extra);
		gaps.push(...result.gaps);
	}
	return { past, extra, gaps };
}

try {
	console.log(`set up: ${kinds.map((kind) => kind.name).join(", ")}; ${load()}`);
	for (const { name, target } of kinds) {
		const { past, extra, gaps } = await series(target);
		console.log(
			`${name}: tokens past the limit at the pause ${spread(past, "tokens")}, max ${Math.max(...past)} (one request is ${TOKENS_PER_REQUEST}); requests past the crossing one: max ${Math.max(...extra)}; turn_end -> next request ${spread(gaps)}; ${load()}`,
		);
	}
	console.log(load());
} finally {
	await cleanup();
}
process.exit(0);
