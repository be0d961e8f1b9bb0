// A question's way to a notifier with no board open: from the worker's ask_user (the runner's event
// time in events.jsonl) to a loopback receiver's request, through the runner's outbox write and the
// store's keeper (watch + poll). One row per question (a row's messages are rate-limited), each
// answered once its message arrived, so the keeper is warm as it would be while runs go on.
// Run: node --experimental-strip-types bench/notify-latency.mjs   (BENCH_RUNS questions, default 20)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runNotify } from "../src/board/subcommands/notify-command.ts";
import { createBoardService } from "../src/board/engine/service.ts";
import { createTestAgent, PI_CLI } from "../test-support/pi-harness.ts";
import { startReceiver } from "../test-support/receiver.ts";
import { load, spread } from "./_stats.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const agent = createTestAgent({
	script: {
		rules: [
			{
				match: "BENCH-ASK",
				steps: [{ toolCall: { name: "ask_user", args: { question: "Go on?" } } }, { text: "done" }],
			},
		],
	},
});
const store = join(agent.root, "store");
const board = createBoardService({ storeDir: store, piCommand: [process.execPath, PI_CLI], env: agent.env });
const receiver = await startReceiver();
await runNotify({ verb: "add", name: "bench", url: `${receiver.base}/json`, on: "needs-input" }, store);

/** @param {() => unknown} test */
async function until(test) {
	for (let i = 0; i < 1200; i++) {
		const value = test();
		if (value) return value;
		await new Promise((resolve) => setTimeout(resolve, 25));
	}
	throw new Error("timed out");
}

/** @type {number[]} */
const latencies = [];
try {
	for (let i = 0; i < RUNS; i++) {
		const row = await board.dispatch({ prompt: `BENCH-ASK question ${i}`, cwd: agent.cwd });
		const arrived = /** @type {import("../test-support/receiver.ts").Received} */ (
			await until(() => receiver.delivered().find((r) => JSON.parse(r.body).row === row.id))
		);
		const asked = readFileSync(join(String(row.runDir), "events.jsonl"), "utf8")
			.split("\n")
			.filter(Boolean)
			.map((line) => JSON.parse(line))
			.find((e) => e.type === "tool_execution_start" && e.toolName === "ask_user");
		latencies.push(arrived.at - asked.at);
		await board.reply(row.id, "yes");
	}
	console.log(
		`question -> notifier, no board open: ${spread(latencies)}; p50 and p95 over ${RUNS} questions; ${load()}`,
	);
} finally {
	await receiver.close();
	agent.cleanup();
}
