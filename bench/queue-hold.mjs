// What queued runs cost: 100 runs queued behind one running real-pi worker (limit 1). Prints the
// processes, RSS and CPU held by the store's runs while they wait. Run: node --experimental-strip-types bench/queue-hold.mjs
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createBoardService } from "../src/board/engine/service.ts";
import { createTestAgent, PI_CLI } from "../test-support/pi-harness.ts";
import { runTaggedProcs } from "../test-support/proc-scan.ts";
import { load } from "./_stats.mjs";

const QUEUED = Number(process.env.BENCH_QUEUED ?? 100);
const TICKS = 100;

/** @param {number} pid */
function usage(pid) {
	try {
		const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
		return { rssKb: rss, cpuTicks: Number(fields[11]) + Number(fields[12]) };
	} catch {
		return { rssKb: 0, cpuTicks: 0 };
	}
}

const agent = createTestAgent({ script: { rules: [], fallback: [{ stall: true }] } });
const board = createBoardService({
	storeDir: join(agent.root, "store"),
	piCommand: [process.execPath, PI_CLI],
	maxConcurrent: 1,
	stopGraceMs: 500,
	env: agent.env,
});
try {
	const running = await board.dispatch({ prompt: "the one that runs", cwd: agent.cwd });
	const queued = [];
	for (let i = 0; i < QUEUED; i++) queued.push(await board.dispatch({ prompt: `queued ${i}`, cwd: agent.cwd }));
	await new Promise((r) => setTimeout(r, 4000));
	/** @type {Record<string, number>} */
	const states = {};
	for (const row of await board.list()) states[row.state] = (states[row.state] ?? 0) + 1;
	const queuedIds = queued.map((row) => String(row.currentRunId));
	const heldByQueued = runTaggedProcs(queuedIds);
	const runningProcs = runTaggedProcs([String(running.currentRunId)]);
	const before = runningProcs.map(usage);
	const t0 = Date.now();
	await new Promise((r) => setTimeout(r, 10_000));
	const after = runningProcs.map(usage);
	const seconds = (Date.now() - t0) / 1000;
	const cpu = after.reduce((s, u, i) => s + (u.cpuTicks - (before[i]?.cpuTicks ?? 0)), 0) / TICKS / seconds;
	const rss = after.reduce((s, u) => s + u.rssKb, 0) / 1024;
	console.log(`states: ${JSON.stringify(states)} (${load()})`);
	console.log(
		`${QUEUED} queued runs hold ${heldByQueued.length} processes, 0.0 MB RSS, 0.0 % CPU (they are queue files)`,
	);
	console.log(
		`the running run holds ${runningProcs.length} processes (runner + pi worker): ${rss.toFixed(1)} MB RSS, ${(cpu * 100).toFixed(2)} % of a core over ${seconds.toFixed(0)} s while its model stalls`,
	);
	for (const row of queued) await board.stop(row.id);
	await board.stop(running.id);
} finally {
	agent.cleanup();
}
