/**
 * The dashboard's tests run against test-support/fake-board-service.ts. This holds the fake to the
 * real engine: the same expectations, the ones the dashboard relies on, run on both (the real one
 * with the real pi and the scripted model). A difference fails here, not silently in the UI tests.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { BoardService } from "../src/board/engine/types.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { createFakeBoard } from "../test-support/fake-board-service.ts";
import { createTestAgent, waitFor, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

interface Subject {
	service: BoardService;
	cwd: string;
	/** Resolves once the row's agent really runs (the real one: pi has asked the model). */
	running(id: string): Promise<unknown>;
	/** Resolves once the row's run is over (the real one: pi answered). */
	finished(id: string): Promise<unknown>;
}

const subjects: Record<string, () => Subject> = {
	fake: () => ({
		service: createFakeBoard([]),
		cwd: "/tmp",
		running: async () => undefined,
		finished: async () => undefined,
	}),
	real: () => {
		const agent = createTestAgent({
			script: { rules: [{ match: "HOLD", steps: [{ stall: true }] }], fallback: [{ text: "Done." }] },
		});
		agents.push(agent);
		const service = boardFor(agent, { stopGraceMs: 500 });
		return {
			service,
			cwd: agent.cwd,
			running: (id) =>
				waitFor(async () => (await service.get(id))?.live?.waitingSince, "pi to ask the model", 60_000),
			finished: (id) => waitDone(service, id, 60_000),
		};
	},
};

describe.each(Object.keys(subjects))("the %s board service", (kind) => {
	it("keeps the contract the dashboard relies on", async () => {
		const { service, cwd, running, finished } = subjects[kind]!();
		const reported: string[] = [];
		const unsubscribe = service.watch((ids) => reported.push(...ids));
		try {
			const row = await service.dispatch({ prompt: "HOLD until stopped", name: "contract row", cwd });
			expect(row).toMatchObject({ name: "contract row", cwd, archived: false, pinned: false });
			expect(["queued", "working"]).toContain(row.state);
			expect(row.recentEvents).toBeInstanceOf(Array);
			await running(row.id);
			expect(await service.get(row.id)).toMatchObject({ state: "working", alive: true });
			expect((await service.get(row.id))?.id).toBe(row.id);
			expect(await service.get("no-such-row")).toBeUndefined();
			expect((await service.list()).map((listed) => listed.id)).toContain(row.id);

			// Every change is reported by the row's id, and the version moves.
			await waitFor(() => reported.includes(row.id), "the dispatch to be reported");
			reported.length = 0;
			const version = await service.version();
			await service.rename(row.id, "renamed row");
			await waitFor(() => reported.includes(row.id), "the rename to be reported");
			expect((await service.get(row.id))?.name).toBe("renamed row");
			expect(await service.version()).not.toBe(version);
			await expect(service.rename(row.id, "  ")).rejects.toThrow(/non-empty/);

			await service.pin(row.id, true);
			expect((await service.get(row.id))?.pinned).toBe(true);
			await service.markViewed(row.id);
			expect((await service.get(row.id))?.lastViewedAt).toBeTypeOf("number");

			expect(await service.stop(row.id)).toMatchObject({ id: row.id, state: "stopped", alive: false });
			await service.archive(row.id);
			expect((await service.list()).map((listed) => listed.id)).not.toContain(row.id);
			expect((await service.list({ includeArchived: true })).find((listed) => listed.id === row.id)?.archived).toBe(
				true,
			);
			await expect(service.reply(row.id, "go on")).rejects.toThrow(/archived/);
			await service.unarchive(row.id);

			// A finished row's reply starts a new run on it.
			const replied = await service.reply(row.id, "go on");
			expect(replied.delivery).toBe("new-run");
			expect(replied.row.id).toBe(row.id);
			expect(["queued", "working", "completed"]).toContain(replied.row.state);
			await finished(row.id);

			const set = await service.compare(row.id);
			expect(set.setId).toBeUndefined();
			expect(set.rows.map((member) => member.row.id)).toEqual([row.id]);
			expect((await service.dispatchAttempts({ prompt: "one more", cwd })).length).toBe(1);
		} finally {
			unsubscribe();
		}
	}, 120_000);
});
