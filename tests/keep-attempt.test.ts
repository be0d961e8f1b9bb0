/**
 * "Keep this one" (#28 item 3) on the service contract (the in-memory board): it merges the chosen
 * attempt, then removes the others' worktrees and archives them; nothing changes while another
 * attempt runs; a worktree git refuses to drop stays with its row until the user says yes again. The
 * same steps from compare's `k`, with the plan in one question first.
 */
import { describe, expect, it } from "vitest";
import { CompareView } from "../src/board/dashboard/compare-view.ts";
import { ConfirmView } from "../src/board/dashboard/confirm-view.ts";
import { keepAttempt, planKeep } from "../src/board/engine/keep-attempt.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { harnessPerTest } from "../test-support/dashboard-harness.ts";
import { createFakeBoard, type FakeBoard, flushReports, KEY, makeRow } from "../test-support/fake-board-service.ts";

const harness = harnessPerTest();

function attempts(third: Partial<BoardRow> = {}): BoardRow[] {
	const attempt = (index: number, patch: Partial<BoardRow> = {}) =>
		makeRow({
			id: `a${index}`,
			name: `Add a greeting [${index}/3]`,
			attempt: { setId: "set-1", index, count: 3 },
			worktreePath: `/tmp/no-such-wt/a${index}`,
			branch: `agent-board/a${index}`,
			repo: "/tmp/repo",
			...patch,
		});
	return [attempt(1), attempt(2), attempt(3, third)];
}

/** git refuses to remove a worktree with changes unless forced: as the engine does for `dirty` rows. */
function refuseDirty(board: FakeBoard, dirty: string[]): void {
	const remove = board.removeWorktree.bind(board);
	board.removeWorktree = async (id, options) => {
		if (dirty.includes(id) && !options?.force)
			throw new Error(`worktree /tmp/no-such-wt/${id} has uncommitted changes; pass force to remove it anyway`);
		return remove(id, options);
	};
}

const calls = (board: FakeBoard, method: string) => board.calls.filter((c) => c.method === method).map((c) => c.args);

describe("keep this one", () => {
	it("refuses while another attempt still runs, and changes nothing", async () => {
		const board = createFakeBoard(attempts({ state: "working", alive: true }));
		await expect(planKeep(board, "a1")).rejects.toThrow(
			"attempt #3 (a3) is still running: stop it or wait, then keep #1 (a1). Nothing was changed",
		);
		await expect(keepAttempt(board, "a1")).rejects.toThrow("still running");
		expect(board.calls).toEqual([]);
		await expect(planKeep(board, "nope")).rejects.toThrow("no such row: nope");
		const single = createFakeBoard([makeRow({ id: "s", worktreePath: "/tmp/wt/s" })]);
		await expect(planKeep(single, "s")).rejects.toThrow("row s is not an attempt");
	});

	it("merges the chosen attempt, then removes the others' worktrees and archives them; a refused worktree stays with its row", async () => {
		const board = createFakeBoard(attempts());
		refuseDirty(board, ["a3"]);
		const result = await keepAttempt(board, "a2", { commit: true });
		if (result.status !== "kept") throw new Error(result.status);
		expect(calls(board, "merge")).toEqual([
			["a2", { dryRun: true }],
			["a2", { commit: true }],
		]);
		expect(result.removed).toEqual(["a1"]);
		expect(result.archived).toEqual(["a1"]);
		expect(result.refused).toEqual([
			{ id: "a3", reason: "worktree /tmp/no-such-wt/a3 has uncommitted changes; pass force to remove it anyway" },
		]);
		expect(board.rows.find((r) => r.id === "a3")?.archived).toBe(false);
		// Again, forced: the kept attempt is merged already, so only the rest goes.
		const again = await keepAttempt(board, "a2", { force: true });
		if (again.status !== "kept") throw new Error(again.status);
		expect(again.merge).toBeUndefined();
		expect(calls(board, "merge")).toHaveLength(2);
		expect(again.removed).toEqual(["a3"]);
		expect(board.rows.filter((r) => r.archived).map((r) => r.id)).toEqual(["a1", "a3"]);
	});

	it("from compare: k shows the plan in one question, y keeps, and git's refusal is asked about again", async () => {
		const h = await harness(attempts(), { termRows: 24 });
		refuseDirty(h.board, ["a3"]);
		await h.press("c");
		await flushReports();
		expect(h.top()).toBeInstanceOf(CompareView);
		expect(h.dash.render(80).at(-1)).toContain("k keep this one");
		await h.press(KEY.down, "k");
		await flushReports();
		expect(h.top()).toBeInstanceOf(ConfirmView);
		const question = h.screen(80).replace(/\s+/g, " ");
		expect(question).toContain(
			"(y/n) Keep #2 Add a greeting [2/3]: merge it into main (0 files), then archive #1, #3 and remove their worktrees?",
		);
		// The set stays in sight above the question.
		expect(question).toContain("Attempt set set-1");
		await h.press("y");
		await flushReports();
		expect(h.dash.status).toContain(
			"kept #2 Add a greeting [2/3]: merged into main as 111111111111; archived 1, removed 1 worktree",
		);
		expect(h.screen(80).replace(/\s+/g, " ")).toContain(
			"(y/n) Remove the worktree of #3 anyway, losing its uncommitted changes?",
		);
		await h.press("y");
		await flushReports();
		expect(h.dash.status).toContain("removed 1 more worktree");
		expect(h.board.rows.filter((r) => r.archived).map((r) => r.id)).toEqual(["a1", "a3"]);
		expect(h.top()).toBeInstanceOf(CompareView);
	});

	it("k on an attempt that still runs says why", async () => {
		const h = await harness(attempts({ state: "working", alive: true }), { termRows: 24 });
		await h.press("c");
		await flushReports();
		await h.press(KEY.down, KEY.down, "k");
		expect(h.dash.status).toBe("Add a greeting [3/3] is still running: keep it when it is done");
		await h.press(KEY.up, "k");
		await flushReports();
		expect(h.dash.status).toBe(
			"keep: attempt #3 (a3) is still running: stop it or wait, then keep #2 (a2). Nothing was changed",
		);
	});
});
