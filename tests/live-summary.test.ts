/**
 * The live summary (live/ marks): the footer and strip counts at pi start come from the marked rows
 * only, and stay right across a question, a SIGKILLed runner, archive and unarchive, and a store from
 * before live/ (seeded once by a full pass).
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEngineContext } from "../src/board/engine/engine-context.ts";
import { liveRows } from "../src/board/engine/row-read.ts";
import { countRows } from "../src/board/view-model/row-text.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { cloneRows } from "../test-support/clone-rows.ts";
import { createTestAgent, PI_CLI, waitFor, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

describe("live summary", () => {
	it("counts from the marked rows only, right across a question, a crash, archive and a store without live/", async () => {
		const agent = createTestAgent({
			script: {
				rules: [
					{ match: "STALL", steps: [{ stall: true }] },
					{ match: "ASK-TEXT", steps: [{ text: "I found two configs. Should I merge them?" }] },
				],
				fallback: [{ text: "Done." }],
			},
		});
		agents.push(agent);
		const board = boardFor(agent);
		const storeDir = board.storeDir;
		const marks = () =>
			readdirSync(join(storeDir, "live"))
				.filter((name) => !name.startsWith("."))
				.sort();
		const counts = async () => {
			const { waiting, running } = countRows(await board.liveRows!());
			return { waiting, running };
		};
		const fullCounts = async () => {
			const { waiting, running } = countRows(await board.list({ includeArchived: true }));
			return { waiting, running };
		};
		const quiet = await board.dispatch({ prompt: "quiet row", cwd: agent.cwd });
		await waitDone(board, quiet.id);
		cloneRows(storeDir, quiet.id, 0, 300);
		const ask = await board.dispatch({ prompt: "ASK-TEXT now", cwd: agent.cwd });
		expect(await waitDone(board, ask.id)).toMatchObject({ state: "needs_input" });
		const stalled = await board.dispatch({ prompt: "STALL please", cwd: agent.cwd });
		await waitFor(async () => (await board.get(stalled.id))?.live?.waitingSince, "the stalled run", 30_000);

		expect(await counts()).toEqual({ waiting: 1, running: 1 });
		expect(await fullCounts()).toEqual({ waiting: 1, running: 1 });
		// The finished row's mark goes at the first supervise step after its end (the board's tick, or
		// list); the clones never had one.
		await board.supervise();
		expect(marks()).toEqual([ask.id, stalled.id].sort());

		// At pi start: the summary reads the two marked rows' files and no other row's.
		const ctx = createEngineContext({ storeDir, env: agent.env, piCommand: [process.execPath, PI_CLI] });
		const reads: string[] = [];
		const read = ctx.cache.read.bind(ctx.cache);
		ctx.cache.read = ((...args: Parameters<typeof read>) => {
			reads.push(args[0]);
			return read(...args);
		}) as typeof ctx.cache.read;
		expect(
			liveRows(ctx)
				.map((row) => row.id)
				.sort(),
		).toEqual([ask.id, stalled.id].sort());
		expect(reads.length).toBeGreaterThan(0);
		expect(
			reads.filter((path) => !path.includes(`/rows/${ask.id}/`) && !path.includes(`/rows/${stalled.id}/`)),
		).toEqual([]);

		// A runner killed with SIGKILL: reads count it out at once; the supervise step records the death
		// and drops the mark.
		const runner = JSON.parse(readFileSync(join(stalled.runDir!, "runner.json"), "utf8")) as { pid: number };
		process.kill(runner.pid, "SIGKILL");
		await waitFor(async () => (await counts()).running === 0, "the dead runner to stop counting", 20_000);
		expect(await counts()).toEqual({ waiting: 1, running: 0 });
		expect(await fullCounts()).toEqual({ waiting: 1, running: 0 });
		await board.supervise();
		expect(marks()).toEqual([ask.id]);

		// An archived question does not count; unarchived, it does again.
		await board.archive(ask.id);
		expect(await counts()).toEqual({ waiting: 0, running: 0 });
		await board.supervise();
		expect(marks()).toEqual([]);
		await board.unarchive(ask.id);
		expect(await counts()).toEqual({ waiting: 1, running: 0 });
		expect(marks()).toEqual([ask.id]);

		// A store from before live/: reads count from every row until the supervise step seeds the marks, once.
		rmSync(join(storeDir, "live"), { recursive: true });
		expect(await counts()).toEqual({ waiting: 1, running: 0 });
		await board.supervise();
		expect(marks()).toEqual([ask.id]);
		expect(existsSync(join(storeDir, "live", ".seeded"))).toBe(true);
	}, 120_000);
});
