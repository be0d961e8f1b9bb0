/** Concurrency: the slot limit holds and every event is recorded (more dispatchers: board-stress). */
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { storeWorkers } from "../test-support/proc-scan.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { boardFor, readEvents, waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

/** Session message entries must match the message_end events the runner recorded for that run. */
function expectAllEventsRecorded(row: BoardRow): void {
	const events = readEvents(row.runDir!);
	expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
	expect(events[0]?.type).toBe("session");
	expect(events.at(-1)?.type).toBe("agent_settled");
	const session = readFileSync(row.sessionFile, "utf8")
		.split("\n")
		.filter(Boolean)
		.map((l) => JSON.parse(l) as { type: string; message?: { role: string } });
	const sessionMessages = session.filter((e) => e.type === "message" && e.message?.role !== "system").length;
	const ended = events.filter(
		(e) => e.type === "message_end" && (e.message as { role?: string }).role !== "system",
	).length;
	expect(ended).toBe(sessionMessages);
	expect(ended).toBeGreaterThanOrEqual(2);
}

describe("board concurrency", () => {
	it("runs 20 dispatches with limit 4: never more than 4 workers at once, all finish", async () => {
		const agent = createTestAgent({
			script: { rules: [], fallback: [{ delayMs: 300, then: { text: "Finished the slice." } }] },
		});
		agents.push(agent);
		const board = boardFor(agent, { maxConcurrent: 4 });
		const rows = await Promise.all(
			Array.from({ length: 20 }, (_, n) => board.dispatch({ prompt: `slice ${n}`, cwd: agent.cwd })),
		);
		let maxLive = 0;
		// Over the limit, a dispatch returns a queued row.
		let sawQueued = rows.some((row) => row.state === "queued");
		let finished = false;
		const sampler = (async () => {
			while (!finished) {
				maxLive = Math.max(maxLive, storeWorkers(board.storeDir).length);
				await new Promise((r) => setTimeout(r, 5));
			}
		})();
		const states = new Set<string>();
		const done: BoardRow[] = [];
		for (const row of rows) {
			const current = await board.get(row.id);
			states.add(current?.state ?? "");
			if (current?.state === "queued") sawQueued = true;
			done.push(await waitDone(board, row.id, 90_000));
		}
		finished = true;
		await sampler;
		expect(done.map((row) => row.state)).toEqual(rows.map(() => "completed"));
		expect(maxLive).toBeGreaterThan(0);
		expect(maxLive).toBeLessThanOrEqual(4);
		expect(sawQueued).toBe(true);
		// Independent record: model requests per worker pid never overlap more than 4 at a time.
		const spans = new Map<number, { start: number; end: number }>();
		for (const call of agent.calls()) {
			const span = spans.get(call.pid) ?? { start: call.at, end: call.at };
			span.end = Math.max(span.end, call.at + 300);
			spans.set(call.pid, span);
		}
		expect(spans.size).toBe(20);
		const overlapAt = (t: number) => [...spans.values()].filter((span) => span.start <= t && t < span.end).length;
		expect(Math.max(...[...spans.values()].map((span) => overlapAt(span.start)))).toBeLessThanOrEqual(4);
		for (const done of rows) expectAllEventsRecorded((await board.get(done.id))!);
	}, 180_000);
});
