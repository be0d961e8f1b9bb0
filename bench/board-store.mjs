// Store read numbers at 500 and 5,000 rows: a cold list(), an unchanged list() and version().
// (Live status latency: bench/live-status.mjs; queued runs: bench/queue-hold.mjs.)
// Run: node --experimental-strip-types bench/board-store.mjs
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBoardService } from "../src/board/engine/service.ts";
import { storePaths } from "../src/board/engine/paths.ts";
import { writeMeta } from "../src/board/engine/store.ts";
import { ensureDir, writeJsonAtomic } from "../runner/store/fs-util.mjs";
import { finalize, initialStatus, applyEvent } from "../runner/life/state-rules.mjs";
import { load, spread } from "./_stats.mjs";

const root = mkdtempSync(join(tmpdir(), "pab-bench-"));
/** @param {number} n */
const ms = (n) => `${n.toFixed(1)} ms`;

/** @param {number} count */
async function storeRead(count) {
	const storeDir = join(root, `store${count}`);
	const paths = storePaths(storeDir);
	for (const dir of [paths.rows, paths.sessions, paths.slots]) ensureDir(dir);
	const now = Date.now();
	for (let i = 0; i < count; i++) {
		const id = `row${String(i).padStart(4, "0")}`;
		const runId = `run-${i}`;
		ensureDir(paths.run(id, runId));
		writeMeta(paths, {
			version: 1,
			id,
			name: `task ${i}`,
			cwd: root,
			runCwd: root,
			sessionFile: paths.session(id),
			createdAt: now,
			updatedAt: now,
			pinned: false,
			archived: false,
			worktreeMode: "none",
			currentRunId: runId,
		});
		const status = initialStatus(runId, id, now);
		applyEvent(
			status,
			{
				type: "message_end",
				message: {
					role: "assistant",
					content: [{ type: "text", text: `Finished task ${i}. All good.` }],
					stopReason: "stop",
				},
			},
			now,
		);
		applyEvent(status, { type: "agent_settled" }, now);
		writeJsonAtomic(join(paths.run(id, runId), "status.json"), finalize(status, { code: 0, signal: null, now }));
	}
	const service = createBoardService({ storeDir, piCommand: ["pi"] });
	let t = performance.now();
	const rows = await service.list();
	const cold = performance.now() - t;
	const warm = [];
	for (let i = 0; i < 15; i++) {
		t = performance.now();
		await service.list();
		warm.push(performance.now() - t);
	}
	const versions = [];
	for (let i = 0; i < 15; i++) {
		t = performance.now();
		await service.version();
		versions.push(performance.now() - t);
	}
	console.log(
		`store read, ${rows.length} rows: cold ${ms(cold)}; list() unchanged ${spread(warm)}; version() ${spread(versions)} (${load()})`,
	);
}

try {
	for (const rows of [500, 5000]) await storeRead(rows);
} finally {
	rmSync(root, { recursive: true, force: true });
}
