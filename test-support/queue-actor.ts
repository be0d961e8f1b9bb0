/**
 * Child process for the queue-order tests: one queue writer (an enqueuer or a pumper) that a test
 * drives step by step. argv: storeDir enqueue <rowId> | storeDir pump <maxConcurrent> | storeDir release
 * <runId> (a reader recording that run's end frees its slots).
 * QUEUE_PAUSE names a step point (queueSteps, runner/life/queue-lock.mjs) where it stops, says
 * `paused <point>` and waits for the file QUEUE_GO to exist; QUEUE_FAIL names one where a disk-full
 * error is thrown. It says `lock-busy` when it finds the queue's lock held, and `done <json>` at the end.
 */
import { existsSync, writeSync } from "node:fs";
import { enqueue, pumpQueue, queueSteps } from "../runner/life/queue.mjs";
import { releaseRunSlots } from "../runner/life/slots.mjs";

const [storeDir, action, arg] = process.argv.slice(2) as [string, string, string];
const { QUEUE_PAUSE: pause, QUEUE_FAIL: fail, QUEUE_GO: go } = process.env;
const say = (line: string) => writeSync(1, `${line}\n`);
const sleeper = new Int32Array(new SharedArrayBuffer(4));

queueSteps.at = (point: string) => {
	if (point === "lock-busy") say("lock-busy");
	if (point === pause) {
		say(`paused ${point}`);
		// A blocking wait, as a descheduled process would: nothing of this process runs meanwhile.
		while (!existsSync(go ?? "")) Atomics.wait(sleeper, 0, 0, 5);
	}
	if (point === fail) throw Object.assign(new Error("ENOSPC: no space left on device (injected)"), { code: "ENOSPC" });
};

if (action === "enqueue") {
	enqueue(storeDir, { rowId: arg, runId: `run-${arg}` });
	say("done null");
} else if (action === "release") {
	releaseRunSlots(storeDir, arg);
	say("done null");
} else {
	// /bin/false as the runner's node: the test is about who starts, not about a runner.
	say(`done ${JSON.stringify(pumpQueue(storeDir, { maxConcurrent: Number(arg), node: "/bin/false", env: {} }))}`);
}
