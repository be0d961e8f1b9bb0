/**
 * What a change costs the board, counted (no timing): opening formats only the rows on screen, one
 * changed row re-places one row and re-formats only the window, and a streaming row shows the newest
 * words of its reply. Also: the frame (hint and status lines) and help fit a 24-row terminal.
 */
import { describe, expect, it } from "vitest";
import { HelpView } from "../src/board/dashboard/help-view.ts";
import { formatRowLine, rowLineParts } from "../src/board/dashboard/row-line.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { fitTail, liveTail } from "../src/board/view-model/row-text.ts";
import { type DashboardHarness, harnessPerTest } from "../test-support/dashboard-harness.ts";
import { flushReports, makeRow } from "../test-support/fake-board-service.ts";

const PAGE_DOWN = "\x1b[6~";
const opened = harnessPerTest();
const harness = (rows: BoardRow[], termRows: number): Promise<DashboardHarness> => opened(rows, { termRows });

function many(n: number): BoardRow[] {
	const now = Date.now();
	return Array.from({ length: n }, (_, i) =>
		makeRow({
			id: `row-${String(i).padStart(5, "0")}`,
			name: `row number ${i}`,
			state: i % 7 === 0 ? "working" : "completed",
			alive: i % 7 === 0,
			lastActivityAt: now - i * 1000,
		}),
	);
}

describe("the board at scale", () => {
	it("opens on what is on screen and repaints one changed row by formatting only the window", async () => {
		const h = await harness(many(5000), 24);
		const window = h.dash.list.window;
		const model = h.dash.list.model;
		const onScreen = h.dash.bodyRows();
		expect(model.rowCount).toBe(5000);
		// Opening: the list is sorted, but only the rows on screen were formatted.
		expect(window.formatted).toBeGreaterThan(0);
		expect(window.formatted).toBeLessThanOrEqual(onScreen);
		const formatted = window.formatted;
		const placements = model.placements;
		h.board.setState("row-02500", "needs_input", { question: "Which one?", alive: true });
		await flushReports();
		const screen = h.screen(80);
		// One row moved groups: placed once; the repaint formatted the window, not the store.
		expect(model.placements - placements).toBe(1);
		expect(window.formatted - formatted).toBeLessThanOrEqual(onScreen);
		expect(screen).toMatch(/Needs input \(1\)[\s\S]*row number 2500.*Which one\?/);
	});

	it("keeps the hint and status lines with 30 rows at 80x24, and the list scrolls within what is left", async () => {
		const h = await harness(many(30), 24);
		const lines = h.dash.render(80);
		// pi keeps a transcript row and its three footer lines.
		expect(lines.length).toBeLessThanOrEqual(24 - 4);
		expect(lines.at(-1)).toMatch(/n new.*\? help/);
		await h.press("b");
		expect(h.dash.render(80).at(-2)).toContain("not attached: nothing to go back to");
		await h.press(PAGE_DOWN, PAGE_DOWN, PAGE_DOWN, PAGE_DOWN);
		const bottom = h.dash.render(80);
		expect(bottom.join("\n")).toMatch(/^>.*row number 29/m);
		expect(bottom.at(-1)).toMatch(/\? help/);
	});

	it("help scrolls to its last key at 80x24 and no key runs into its text at 60 to 200 columns", async () => {
		const h = await harness(many(3), 24);
		await h.press("?");
		expect(h.top()).toBeInstanceOf(HelpView);
		expect(h.screen(80)).not.toContain("close the board");
		await h.press("G");
		const end = h.dash.render(80);
		expect(end.join("\n")).toMatch(/^ {2}q\s+close the board/m);
		expect(end.length).toBeLessThanOrEqual(20);
		for (const width of [60, 80, 120, 200]) {
			await h.press("g");
			const text = h.screen(width);
			expect(text, `at ${width}`).toMatch(/^ {2}up down\s{2,}move the selection\s*$/m);
			expect(text, `at ${width}`).toMatch(/^ {2}pageUp pageDown\s{2,}move the selection a page\s*$/m);
		}
	});
});

describe("a streaming row shows the newest words", () => {
	const words = Array.from({ length: 120 }, (_, i) => `w${String(i).padStart(3, "0")}`);
	const text = words.join(" ");

	it("cuts the tail at a word and keeps its end, in the list and in peek", () => {
		expect(fitTail(text, 40)).toMatch(/^…w\d{3}( w\d{3})* w119$/);
		const row = makeRow({ state: "working", alive: true, live: { text } });
		for (const width of [60, 80, 120]) {
			const line = formatRowLine(rowLineParts(row, Date.now()), width);
			expect(line.summary, `at ${width}`).toMatch(/…w\d{3}.* w119\s*$/);
			expect(line.summary).not.toContain("w000");
		}
		// The runner keeps the last 600 characters: the first word of that tail is a fragment.
		const tail = text.slice(-600);
		expect(tail.startsWith(" ")).toBe(false);
		expect(liveTail(tail)).toMatch(/^…w\d{3} /);
	});

	it("in the board: the row's line ends with the newest word as the reply grows", async () => {
		const h = await harness(
			[
				makeRow({
					id: "s1",
					name: "streamer",
					state: "working",
					alive: true,
					live: { text: words.slice(0, 40).join(" ") },
				}),
			],
			24,
		);
		expect(h.screen(80)).toMatch(/streamer.*w039/);
		h.board.setState("s1", "working", { live: { text: text.slice(-600) } });
		await flushReports();
		const line =
			h
				.screen(80)
				.split("\n")
				.find((l) => l.includes("streamer")) ?? "";
		expect(line).toMatch(/…w\d{3}.*w119/);
	});
});
