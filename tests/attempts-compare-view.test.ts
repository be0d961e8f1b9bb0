/** Compare view of an attempt set on the board, at 80 and 120 columns, driven by keys (pi's keybindings). */
import { visibleWidth } from "@earendil-works/pi-tui";
import { describe, expect, it } from "vitest";
import { CompareView } from "../src/board/dashboard/compare-view.ts";
import { ConfirmView } from "../src/board/dashboard/confirm-view.ts";
import { ListView } from "../src/board/dashboard/list-view.ts";
import { DiffView } from "../src/board/dashboard/viewer-view.ts";
import type { AttemptSetView, BoardRow } from "../src/board/engine/types.ts";
import { type DashboardHarness, harnessPerTest } from "../test-support/dashboard-harness.ts";
import { flushReports, KEY, makeRow } from "../test-support/fake-board-service.ts";

function attempt(index: number, patch: Partial<BoardRow>): BoardRow {
	return makeRow({
		id: `r${index}`,
		attempt: { setId: "set-1", index, count: 3 },
		worktreeMode: "worktree",
		worktreePath: `/tmp/wt/r${index}`,
		repo: "/repo",
		lastActivityAt: 1000 - index,
		...patch,
	});
}

function rows(): BoardRow[] {
	return [
		attempt(1, {
			name: "Fix the login bug [1/3]",
			diff: { added: 3, removed: 1, files: 2 },
			summary: "Rewrote the session check.",
		}),
		attempt(2, {
			name: "Fix the login bug [2/3] \x1b[31mred\x1b[0m\x07",
			diff: { added: 5, removed: 0, files: 1 },
			state: "working",
			alive: true,
		}),
		attempt(3, { name: "Fix the login bug [3/3]", merged: { at: 1, commit: "c".repeat(40), into: "main" } }),
	];
}

function fixture(set: BoardRow[]): AttemptSetView {
	const [one, two, three] = set as [BoardRow, BoardRow, BoardRow];
	return {
		setId: "set-1",
		repo: "/repo",
		rows: [
			{ row: one, files: ["login.ts", "session.ts"], overlaps: [{ file: "login.ts", rows: ["r2"] }] },
			{ row: two, files: ["login.ts"], overlaps: [{ file: "login.ts", rows: ["r1"] }] },
			{ row: three, files: ["other.ts"], overlaps: [] },
		],
	};
}

const harness = harnessPerTest();

async function compare(): Promise<{ h: DashboardHarness; view: CompareView }> {
	const set = rows();
	const h = await harness(set);
	h.dash.list.select("r1");
	await h.press("c");
	await flushReports();
	const view = h.top();
	if (!(view instanceof CompareView)) throw new Error("compare did not open");
	view.setData(fixture(set));
	return { h, view };
}

describe("compare view", () => {
	for (const width of [80, 120]) {
		it(`renders an attempt set within ${width} columns`, async () => {
			const { h } = await compare();
			const lines = h.dash.render(width);
			for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
			const screen = lines.join("\n");
			expect(lines[1]).toMatch(/^Attempt set set-1 3 attempts · 1 merged · 2 overlapping · \/repo/);
			expect(lines[2]).toMatch(/^> #1 {2}\+ completed {2}\+3 -1 2f {2}!overlap {2}r1 {2}Fix the login bug \[1\/3\]/);
			expect(screen).toContain("     files: login.ts, session.ts");
			expect(screen).toContain("     overlap: login.ts (with r2)");
			expect(screen).toContain("     Rewrote the session check.");
			expect(screen).toMatch(
				/ {2}#2 {2}> working {2}\+5 -0 1f {2}!overlap {2}r2 {2}Fix the login bug \[2\/3\] {1,2}red/,
			);
			expect(screen).toMatch(/ {2}#3 {2}merged → main {2}1f {2}r3/);
			// Worker text never carries escape or control sequences to the terminal.
			expect(screen).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
		});
	}

	it("marks, diffs, merges and goes back; a merge or diff returns to it", async () => {
		const { h, view } = await compare();
		await h.press("d");
		expect(h.dash.status).toBe("mark one attempt, select another, then diff");
		await h.press(" ", KEY.down, "d");
		expect(h.top()).toBeInstanceOf(DiffView);
		await flushReports();
		expect(h.board.calls.find((c) => c.method === "compareDiff")?.args).toEqual(["r1", "r2"]);
		await h.press(KEY.esc);
		expect(h.top()).toBe(view);
		expect(h.dash.render(80)[2]).toMatch(/^ \*#1/);
		// #2 still runs: the key says why instead of planning a merge the engine would refuse.
		await h.press("m");
		expect(h.dash.status).toMatch(/^Fix the login bug \[2\/3\] red\S* is still running: merge it when it is done/);
		await h.press(KEY.up, "m");
		await flushReports();
		expect(h.top()).toBeInstanceOf(ConfirmView);
		await h.press("n");
		expect(h.top()).toBe(view);
		await h.press(KEY.down, KEY.down, "m");
		expect(h.dash.status).toBe("Fix the login bug [3/3] is already merged into main");
		await h.press(KEY.esc);
		expect(h.top()).toBeInstanceOf(ListView);
	});
});
