/**
 * The board's `/` also searches: rows the search finds for the filter's words join the list (an archived
 * one too), the line under the list says where the selected one matched, and enter peeks it like any row.
 * The filter's own words keep narrowing by name and state as before. A fake search stands for the index.
 */
import { describe, expect, it } from "vitest";
import type { SearchHit } from "../runner/search/search-query.mjs";
import { PeekView } from "../src/board/dashboard/peek-view.ts";
import { type DashboardHarness, harnessPerTest } from "../test-support/dashboard-harness.ts";
import { KEY, makeRow } from "../test-support/fake-board-service.ts";

const harness = harnessPerTest();
const type = (text: string): string[] => [...text];
const listed = (h: DashboardHarness) => h.dash.list.model.rows().map((row) => row.id);

const rows = () => [
	makeRow({ id: "a1", name: "fix the login page", state: "completed" }),
	makeRow({ id: "b2", name: "tidy the docs", state: "completed" }),
	makeRow({ id: "c3", name: "old migration", state: "failed", archived: true }),
];

const hit = (rowId: string, text: string, fields: string[]): SearchHit => ({
	rowId,
	name: rowId,
	state: "completed",
	place: "local",
	preset: "",
	archived: false,
	activeAt: 0,
	fields,
	snippet: { text, matches: [[text.indexOf("deadlock"), text.indexOf("deadlock") + "deadlock".length]] },
});

describe("the board's / searches everything that ran", () => {
	it("lists the rows the search found, says where the selected one matched, and peeks it", async () => {
		const asked: string[] = [];
		const h = await harness(rows(), {
			search: async (_storeDir, text) => {
				asked.push(text);
				return text.includes("deadlock")
					? [
							hit("b2", "ERROR: postgres deadlock detected in the suite", ["tool output"]),
							hit("c3", "a deadlock in the migration", ["text"]),
						]
					: [];
			},
		});
		await h.press("/", ...type("deadlock"));
		// Before the pause in typing is over: only the name filter (nothing matches by name).
		expect(listed(h)).toEqual([]);
		await new Promise((resolve) => setTimeout(resolve, 400));
		await h.press();
		expect(asked).toEqual(["deadlock"]);
		expect(listed(h).sort()).toEqual(["b2", "c3"]);
		const screen = h.screen(100);
		expect(screen).toContain("2 found by search");
		expect(screen).toMatch(/found in (tool output|text): .*deadlock/);
		await h.press(KEY.enter);
		// The filter is kept; the selected row is peeked like any row.
		await h.press(KEY.enter);
		expect(h.top()).toBeInstanceOf(PeekView);
	});

	it("keeps the filter's own words: a name match shows at once; escape drops the search's rows", async () => {
		const h = await harness(rows(), { search: async () => [hit("b2", "deadlock in login", ["text"])] });
		await h.press("/", ...type("login"));
		expect(listed(h)).toEqual(["a1"]);
		await new Promise((resolve) => setTimeout(resolve, 400));
		await h.press();
		expect(listed(h).sort()).toEqual(["a1", "b2"]);
		await h.press(KEY.esc);
		expect(listed(h).sort()).toEqual(["a1", "b2"]);
		expect(h.screen()).not.toContain("found by search");
	});
});
