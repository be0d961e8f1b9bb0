// Time from a user's answer to the worker's next model request: answered in place (ask_user waiting,
// the answer sent on the control channel) against a cold resume (a new pi on the same session with
// the answer as its prompt). Real pi, faux model. Run with --experimental-strip-types.
import { createTestAgent } from "../test-support/pi-harness.ts";
import { spawnWorker, toolStarted } from "../test-support/worker-channel.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 9);

/** @param {number[]} values */
function stats(values) {
	const sorted = [...values].sort((a, b) => a - b);
	const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
	return `median ${median.toFixed(1)} ms, min ${sorted[0]?.toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms (n=${sorted.length})`;
}

const agent = createTestAgent();
try {
	const ask = { toolCall: { name: "ask_user", args: { question: "Next?" } } };
	agent.writeScript({
		rules: [{ match: "BENCH-ASK", steps: [...Array.from({ length: RUNS }, () => ask), { text: "done" }] }],
		fallback: [{ text: "resumed" }],
	});

	// In place: one worker, RUNS questions answered one after another.
	/** @type {number[]} */
	const inPlace = [];
	const worker = spawnWorker(agent);
	worker.send({ type: "prompt", text: "BENCH-ASK" });
	for (let i = 0; i < RUNS; i++) {
		await worker.waitForEvent(
			(event) => toolStarted("ask_user")(event) && worker.events().filter(toolStarted("ask_user")).length > i,
			`question ${i + 1}`,
		);
		const before = agent.calls().length;
		const sentAt = Date.now();
		worker.send({ type: "message", id: `a${i}`, text: `answer ${i}`, deliverAs: "steer" });
		const next = await waitForCall(before);
		inPlace.push(next.at - sentAt);
	}
	await worker.exited();
	const receipts = worker.lines.filter(
		(line) => line.type === "receipt" && line.status === "delivered" && line.as === "answer",
	).length;
	if (receipts !== RUNS) throw new Error(`expected ${RUNS} answer receipts, got ${receipts}`);

	// Cold: a new pi on the same session file, the answer as its prompt (what a parked row costs).
	/** @type {number[]} */
	const cold = [];
	for (let i = 0; i < RUNS; i++) {
		const before = agent.calls().length;
		const sentAt = Date.now();
		const resumed = spawnWorker(agent, { sessionFile: worker.sessionFile });
		resumed.send({ type: "prompt", text: `cold answer ${i}` });
		const next = await waitForCall(before);
		cold.push(next.at - sentAt);
		await resumed.exited();
	}

	console.log(`answer -> next model request, in place:  ${stats(inPlace)}`);
	console.log(`answer -> next model request, cold pi:   ${stats(cold)}`);
} finally {
	agent.cleanup();
}

/** @param {number} before */
async function waitForCall(before) {
	for (;;) {
		const calls = agent.calls();
		if (calls.length > before) return /** @type {import("../test-support/pi-harness.ts").FauxCall} */ (calls[before]);
		await new Promise((resolve) => setTimeout(resolve, 2));
	}
}
