// What a dispatch call costs its caller (#40, "Dispatch that returns at once"): N dispatches one after
// another from one process through the board's service, as a script would, in a git repository without
// worktrees, with a worker that ends at once ("false") and a small limit, so most calls find the slots full
// and their run waits queued. Prints the calls' total, each call's median with its spread, the time until
// every run has ended, and the load. --count K (at most 8, MAX_ATTEMPTS): also N/K attempt sets of K, each
// attempt in a worktree of its own.
// Run: node --experimental-strip-types bench/dispatch-burst.mjs [--n 100] [--count 8] [--max 2]
import { join } from "node:path";
import { createBoardService } from "../src/board/engine/service.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { createTestAgent } from "../test-support/pi-harness.ts";
import { load, spread } from "./_stats.mjs";

/** @param {string} name @param {number} fallback */
const arg = (name, fallback) => {
	const i = process.argv.indexOf(name);
	return i >= 0 ? Number(process.argv[i + 1] ?? fallback) : fallback;
};
const N = arg("--n", 100);
const COUNT = arg("--count", 0);
const MAX = arg("--max", 2);

const agent = createTestAgent();
const repo = initRepo(join(agent.root, "repo"), { "README.md": "bench\n" });
const board = createBoardService({
	storeDir: join(agent.agentDir, "agent-board"),
	piCommand: ["false"],
	maxConcurrent: MAX,
	env: agent.env,
});

/**
 * `calls` dispatches one after another; each call's own milliseconds and the whole.
 * @param {number} calls @param {number} count
 */
async function burst(calls, count) {
	/** @type {number[]} */
	const each = [];
	/** @type {string[]} */
	const ids = [];
	const t0 = performance.now();
	for (let i = 0; i < calls; i++) {
		const start = performance.now();
		const rows = await board.dispatchAttempts({
			prompt: `burst ${i}`,
			cwd: repo,
			...(count > 1 ? { count } : {}),
		});
		each.push(performance.now() - start);
		ids.push(...rows.map((row) => row.id));
	}
	const total = performance.now() - t0;
	// The runs still drain through the queue after the last call returned; their end is when a script's rows are done.
	const deadline = Date.now() + 600_000;
	for (;;) {
		const rows = await board.list();
		const open = rows.filter((row) => ids.includes(row.id) && (row.state === "queued" || row.state === "working"));
		if (open.length === 0 || Date.now() > deadline) break;
		await new Promise((r) => setTimeout(r, 200));
	}
	return { each, total, drained: performance.now() - t0, rows: ids.length };
}

try {
	const plain = await burst(N, 1);
	console.log(`${N} dispatches, no worktree, limit ${MAX} (${load()})`);
	console.log(`  calls' total ${(plain.total / 1000).toFixed(2)} s; each call ${spread(plain.each)}`);
	console.log(`  every run ended ${(plain.drained / 1000).toFixed(2)} s after the first call`);
	if (COUNT > 1) {
		const sets = Math.max(1, Math.floor(N / COUNT));
		const set = await burst(sets, COUNT);
		console.log(`${sets} attempt sets of ${COUNT} (${set.rows} rows in worktrees), limit ${MAX} (${load()})`);
		console.log(`  calls' total ${(set.total / 1000).toFixed(2)} s; each set ${spread(set.each)}`);
		console.log(`  every run ended ${(set.drained / 1000).toFixed(2)} s after the first call`);
	}
} finally {
	agent.cleanup();
}
