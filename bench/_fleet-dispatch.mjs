// bench/fleet.mjs's dispatcher: a process of its own (as a dispatching pi is), so its synchronous git
// work never stalls the bench's loopback model or its status watches. argv[2]: JSON { storeDir,
// maxConcurrent, calls: DispatchOptions[] } (run at once); prints { t0, t1, ids } on stdout.
import { createBoardService } from "../src/board/engine/service.ts";
import { PI_CLI } from "../test-support/pi-harness.ts";

/** @type {{ storeDir: string, maxConcurrent: number, calls: import("../src/board/engine/types.ts").DispatchOptions[] }} */
const job = JSON.parse(process.argv[2] ?? "{}");
const board = createBoardService({
	storeDir: job.storeDir,
	piCommand: [process.execPath, PI_CLI],
	maxConcurrent: job.maxConcurrent,
	env: { ...process.env },
});
const t0 = Date.now();
const sets = await Promise.all(job.calls.map((call) => board.dispatchAttempts(call)));
const t1 = Date.now();
process.stdout.write(`${JSON.stringify({ t0, t1, ids: sets.flat().map((row) => row.id) })}\n`);
