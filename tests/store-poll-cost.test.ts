/**
 * The safety pass behind the change feed costs O(live rows): on a store of many finished rows it reads
 * only the live row's files, still notices that row's runner SIGKILLed (no file changes), and catches
 * a change the fs.watch missed from notify/'s mtime without reading any row, and reports a row another
 * pi process started again from its live mark.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { touchNotify } from "../runner/store/fs-util.mjs";
import { createEngineContext } from "../src/board/engine/engine-context.ts";
import { liveMarkIds } from "../src/board/engine/live-marks.ts";
import { readRow } from "../src/board/engine/row-read.ts";
import { listRowIds } from "../src/board/engine/store.ts";
import { safetyPoll } from "../src/board/engine/store-poll.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { cloneRows } from "../test-support/clone-rows.ts";
import { createTestAgent, PI_CLI, waitFor, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

describe("safety pass cost", () => {
	it("reads only live rows; sees a SIGKILLed runner and a missed inotify event", async () => {
		const agent = createTestAgent({
			script: { rules: [{ match: "STALL", steps: [{ stall: true }] }], fallback: [{ text: "Done." }] },
		});
		agents.push(agent);
		const board = boardFor(agent);
		const storeDir = board.storeDir;
		const quiet = await board.dispatch({ prompt: "quiet row", cwd: agent.cwd });
		await waitDone(board, quiet.id);
		const clones = cloneRows(storeDir, quiet.id, 0, 300);
		const stalled = await board.dispatch({ prompt: "STALL please", cwd: agent.cwd });
		await waitFor(async () => (await board.get(stalled.id))?.live?.waitingSince, "the stalled run", 30_000);

		const ctx = createEngineContext({ storeDir, env: agent.env, piCommand: [process.execPath, PI_CLI] });
		// What the feed's first list does: every row read once, the live one remembered.
		for (const id of listRowIds(ctx.paths)) readRow(ctx, id);
		expect([...ctx.liveRows.keys()]).toEqual([stalled.id]);
		const reads: string[] = [];
		const read = ctx.cache.read.bind(ctx.cache);
		ctx.cache.read = ((...args: Parameters<typeof read>) => {
			reads.push(args[0]);
			return read(...args);
		}) as typeof ctx.cache.read;
		const pass = safetyPoll(ctx);
		expect(await pass({ delivered: undefined })).toEqual([]);
		expect((await pass({ delivered: 1 })).filter((id) => id !== stalled.id)).toEqual([]);
		// Two passes over 302 rows read the live row's meta and status, and nothing else.
		expect(reads.length).toBeGreaterThan(0);
		expect(reads.filter((path) => !path.startsWith(`${join(storeDir, "rows", stalled.id)}/`))).toEqual([]);

		// A change the watch never delivered: notify/ moved and the watch said nothing.
		reads.length = 0;
		touchNotify(storeDir, clones[7]!);
		expect((await pass({ delivered: 0 })).filter((id) => id !== stalled.id)).toEqual([clones[7]]);
		expect(reads.filter((path) => !path.includes(stalled.id))).toEqual([]);
		// The same change, delivered by the watch: nothing to report.
		touchNotify(storeDir, clones[8]!);
		expect((await pass({ delivered: 1 })).filter((id) => id !== stalled.id)).toEqual([]);

		// A runner killed with SIGKILL changes no file: the pass still reports its row, and it is failed.
		const runner = JSON.parse(readFileSync(join(stalled.runDir!, "runner.json"), "utf8")) as { pid: number };
		process.kill(runner.pid, "SIGKILL");
		await waitFor(
			async () => (await pass({ delivered: 1 })).includes(stalled.id),
			"the pass to notice the dead runner",
			20_000,
		);
		expect(await waitDone(board, stalled.id)).toMatchObject({ state: "failed", error: "runner died" });
		expect(ctx.liveRows.size).toBe(0);

		// A finished row another pi process starts again: no row appears in rows/ and the watch's event is
		// taken as delivered, so only its live mark tells. The pass reports it and follows it from then on.
		const other = createEngineContext({ storeDir, env: agent.env, piCommand: [process.execPath, PI_CLI] });
		const otherPass = safetyPoll(other, { liveIds: () => liveMarkIds(storeDir) });
		await otherPass({ delivered: 1 });
		await board.reply(quiet.id, "STALL again");
		await waitFor(async () => (await board.get(quiet.id))?.live?.waitingSince, "the quiet row's new run", 30_000);
		expect(await otherPass({ delivered: 1 })).toEqual([quiet.id]);
		expect([...other.liveRows.keys()]).toEqual([quiet.id]);
		expect((await board.stop(quiet.id)).state).toBe("stopped");
	}, 120_000);
});
