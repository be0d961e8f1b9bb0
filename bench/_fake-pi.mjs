// Stand-in worker for bench/board-store.mjs: prints pi-shaped JSON events on a fixed schedule.
// Every 100 ms an assistant message_end carries its emit time; deltas stream in between.
const total = Number(process.env.FAKE_PI_MARKS ?? 60);
/** @param {Record<string, unknown>} event */
const out = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
out({ type: "session", version: 3, id: "bench", timestamp: new Date().toISOString(), cwd: process.cwd() });
out({ type: "agent_start" });
let n = 0;
const tick = setInterval(() => {
	n += 1;
	if (n % 5 === 0) {
		const text = `mark ${Date.now()}`;
		out({ type: "message_end", message: { role: "assistant", content: [{ type: "text", text }], stopReason: "stop", usage: { input: 1, output: 1, totalTokens: 2 } } });
	} else {
		out({ type: "message_update", assistantMessageEvent: { type: "text_delta", delta: "x".repeat(40) } });
	}
	if (n >= total * 5) {
		clearInterval(tick);
		out({ type: "agent_end", messages: [] });
		out({ type: "agent_settled", aborted: false });
	}
}, 20);
