/**
 * Opening the board on a long store: the first screen is built from the live rows and the newest rows
 * only (no whole-store read before the first paint), says it is loading, and once the rest has arrived
 * in idle slices the list, its groups, the counts and a filter are those of the whole store.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { BoardService } from "../src/board/engine/types.ts";
import { BoardFeed } from "../src/board/view-model/feed.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { cloneRows } from "../test-support/clone-rows.ts";
import { createTestAgent, waitFor, type TestAgent } from "../test-support/pi-harness.ts";
import { storeRunners } from "../test-support/proc-scan.ts";
import { boardOn } from "../test-support/board-on.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

describe("first open", () => {
	it("paints from the newest rows, says it is loading, then holds the whole store", async () => {
		const agent = createTestAgent({ script: { rules: [], fallback: [{ text: "Done." }] } });
		agents.push(agent);
		const engine = boardFor(agent);
		const seed = await engine.dispatch({ prompt: "seed row", cwd: agent.cwd });
		await waitDone(engine, seed.id);
		cloneRows(engine.storeDir, seed.id, 0, 1000, (n) => (n === 500 ? "needle in the middle" : `cloned row ${n}`));
		const newest = await engine.dispatch({ prompt: "the newest row", name: "the newest row", cwd: agent.cwd });
		await waitDone(engine, newest.id);
		// The run is done once its end is recorded; its runner still writes the final status once more and exits.
		await waitFor(() => storeRunners(engine.storeDir).length === 0, "the newest row's runner to exit");

		const calls = { get: 0, list: 0 };
		const service: BoardService = Object.assign(Object.create(engine) as BoardService, {
			get: (id: string) => {
				calls.get++;
				return engine.get(id);
			},
			list: (options?: { includeArchived?: boolean }) => {
				calls.list++;
				return engine.list(options);
			},
		});
		const feed = new BoardFeed(() => service);
		const { dash } = boardOn(service, { rows: 40, cwd: agent.cwd, feed });
		try {
			await dash.start();
			// Before the first paint: at most the first slice of rows was read, and no whole list.
			expect(calls.list).toBe(0);
			expect(calls.get).toBeGreaterThan(0);
			expect(calls.get).toBeLessThanOrEqual(200);
			const first = dash.render(120).join("\n");
			expect(first).toContain("loading 200/1,002 rows");
			expect(first).toContain("the newest row");

			await feed.fill().done;
			expect(calls.list).toBe(0);
			expect(calls.get).toBe(1002);
			const loaded = dash.render(120).join("\n");
			expect(loaded).not.toContain("loading");
			expect(loaded).toContain("1002 rows");
			expect(dash.list.model.rowCount).toBe(1002);
			expect(dash.list.model.items(0, 1)).toEqual([{ kind: "header", label: "Completed", count: 1002 }]);
			// Rows not shown in full are kept slim, in the feed and in the engine's cache; a full read has it all.
			const whole = await engine.get(newest.id);
			expect(whole?.recentEvents.length).toBeGreaterThan(0);
			expect(feed.row(newest.id)?.recentEvents).toEqual([]);
			expect((await engine.get(newest.id, { slim: true }))?.recentEvents).toEqual([]);
			expect((await engine.get(newest.id))?.recentEvents).toEqual(whole?.recentEvents);
			// A filter over the whole store finds a row the first screen never read.
			for (const key of ["/", ..."needle"]) dash.handleInput(key);
			expect(dash.list.model.rowCount).toBe(1);
			expect(dash.render(120).join("\n")).toContain("needle in the middle");
		} finally {
			dash.dispose();
			feed.stop();
		}
	}, 120_000);
});
