// bench/fleet.mjs's dispatcher: a process of its own (as a dispatching pi is), so its synchronous git
// work never stalls the bench's loopback model or its status watches. argv[2]: JSON { storeDir,
// maxConcurrent, calls: DispatchOptions[], sequential? } (run at once, or one after another as a script
// would); prints a line { dispatched: ids } as each call returns (so a watcher can follow a row from its
// start), then { t0, t1, ids, each, cpuMs } as the last line (each: every call's own milliseconds; cpuMs: this
// process's CPU over the calls, to tell a call's own work from its wait for a busy machine's cores).
import { createBoardService } from "../src/board/engine/service.ts";
import { PI_CLI } from "../test-support/pi-harness.ts";

/** @type {{ storeDir: string, maxConcurrent: number, calls: import("../src/board/engine/types.ts").DispatchOptions[], sequential?: boolean }} */
const job = JSON.parse(process.argv[2] ?? "{}");
const board = createBoardService({
	storeDir: job.storeDir,
	piCommand: [process.execPath, PI_CLI],
	maxConcurrent: job.maxConcurrent,
	env: { ...process.env },
});
/** @type {number[]} */
const each = [];
/** @param {import("../src/board/engine/types.ts").DispatchOptions} call */
const timed = async (call) => {
	const start = Date.now();
	const rows = await board.dispatchAttempts(call);
	each.push(Date.now() - start);
	process.stdout.write(`${JSON.stringify({ dispatched: rows.map((row) => row.id) })}\n`);
	return rows;
};
const t0 = Date.now();
const cpu0 = process.cpuUsage();
/** @type {Awaited<ReturnType<typeof timed>>[]} */
const sets = [];
if (job.sequential) for (const call of job.calls) sets.push(await timed(call));
else sets.push(...(await Promise.all(job.calls.map(timed))));
const t1 = Date.now();
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000;
process.stdout.write(`${JSON.stringify({ t0, t1, ids: sets.flat().map((row) => row.id), each, cpuMs })}\n`);
