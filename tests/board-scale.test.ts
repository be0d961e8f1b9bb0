/** Concurrency: the slot limit holds, concurrent dispatchers lose no rows, every event is recorded. */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { processAlive, readProcess } from "../src/board/store.ts";
import type { BoardRow } from "../src/board/types.ts";
import { boardFor, readEvents, waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, REPO_ROOT, type TestAgent } from "../test-support/pi-harness.ts";

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
	const session = readFileSync(row.sessionFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { type: string; message?: { role: string } });
	const sessionMessages = session.filter((e) => e.type === "message" && e.message?.role !== "system").length;
	const ended = events.filter((e) => e.type === "message_end" && (e.message as { role?: string }).role !== "system").length;
	expect(ended).toBe(sessionMessages);
	expect(ended).toBeGreaterThanOrEqual(2);
}

function runChild(agent: TestAgent, storeDir: string, count: number, max: number, tag: string): Promise<string[]> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, ["--experimental-strip-types", "--no-warnings", join(REPO_ROOT, "test-support/board-dispatch-child.ts"), storeDir, String(count), String(max), agent.cwd, tag], {
			env: agent.env,
			stdio: ["ignore", "pipe", "pipe"],
		});
		let out = "";
		let err = "";
		child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
		child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
		child.on("close", (code) => (code === 0 ? resolve(JSON.parse(out) as string[]) : reject(new Error(`child exited ${code}: ${err}`))));
	});
}

describe("board concurrency", () => {
	it("runs 20 dispatches with limit 4: never more than 4 workers at once, all finish", async () => {
		const agent = createTestAgent({ script: { rules: [], fallback: [{ delayMs: 300, then: { text: "Finished the slice." } }] } });
		agents.push(agent);
		const board = boardFor(agent, { maxConcurrent: 4 });
		const rows = await Promise.all(Array.from({ length: 20 }, (_, n) => board.dispatch({ prompt: `slice ${n}`, cwd: agent.cwd })));
		const runDirs = rows.map((row) => row.runDir!);
		let maxLive = 0;
		let sawQueued = false;
		let finished = false;
		const sampler = (async () => {
			while (!finished) {
				const live = runDirs.filter((dir) => processAlive(readProcess(join(dir, "worker.json")))).length;
				maxLive = Math.max(maxLive, live);
				await new Promise((r) => setTimeout(r, 25));
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

	it("two processes dispatching 20 each at once keep all 40 rows; 16 run at once and record every event", async () => {
		const agent = createTestAgent({ script: { rules: [], fallback: [{ toolCall: { name: "ls", args: {} } }, { text: "Listed and done." }] } });
		agents.push(agent);
		const board = boardFor(agent, { maxConcurrent: 16 });
		const storeDir = board.storeDir;
		const [a, b] = await Promise.all([runChild(agent, storeDir, 20, 16, "alpha"), runChild(agent, storeDir, 20, 16, "beta")]);
		expect(new Set([...a, ...b]).size).toBe(40);
		const listed = await board.list();
		expect(listed.map((row) => row.id).sort()).toEqual([...a, ...b].sort());
		let maxLive = 0;
		let finished = false;
		const sampler = (async () => {
			while (!finished) {
				maxLive = Math.max(maxLive, listed.filter((row) => processAlive(readProcess(join(row.runDir!, "worker.json")))).length);
				await new Promise((r) => setTimeout(r, 25));
			}
		})();
		const done: BoardRow[] = [];
		for (const id of [...a, ...b]) done.push(await waitDone(board, id, 120_000));
		finished = true;
		await sampler;
		expect(maxLive).toBeLessThanOrEqual(16);
		expect(done.filter((row) => row.state !== "completed").map((row) => `${row.id}: ${row.state} ${row.error ?? ""}`)).toEqual([]);
		for (const row of done) expectAllEventsRecorded(row);
	}, 180_000);
});
