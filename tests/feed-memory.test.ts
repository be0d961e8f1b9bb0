/**
 * The feed keeps only what a line shows of rows nobody looks at in full: recent events, the stderr
 * tail and receipts are dropped and the answer is cut, while live rows stay whole; peeking a row
 * reads it whole again and shows what was dropped, and leaving the peek slims it at its next change.
 */
import { afterEach, describe, expect, it } from "vitest";
import { SLIM_TEXT } from "../src/board/view-model/row-slim.ts";
import { dashboardHarness, type DashboardHarness } from "../test-support/dashboard-harness.ts";
import { makeRow } from "../test-support/fake-board-service.ts";

let open: DashboardHarness | undefined;
afterEach(() => open?.dispose());

const answer = `The migration is done. ${"Every table was checked twice. ".repeat(120)}THE VERY END.`;
const heavy = {
	latestAssistant: answer,
	summary: "The migration is done.",
	recentEvents: Array.from({ length: 6 }, (_, n) => ({ at: 1000 + n, text: `event number ${n}` })),
	stderrTail: "warning: something on stderr",
	receipts: [{ id: "m1", status: "delivered" as const, at: 1000, preview: "a message the row got" }],
};

describe("feed memory", () => {
	it("slims rows not shown in full, keeps live rows whole, and a peek reads the row whole", async () => {
		const done = makeRow({ id: "done-1", name: "finished row", state: "completed", ...heavy });
		const live = makeRow({ id: "live-1", name: "live row", state: "working", alive: true, ...heavy });
		open = await dashboardHarness([done, live]);
		const h = open;
		const kept = h.feed.row("done-1")!;
		expect(kept.recentEvents).toEqual([]);
		expect(kept.stderrTail).toBeUndefined();
		expect(kept.receipts).toBeUndefined();
		expect(kept.latestAssistant?.length).toBe(SLIM_TEXT);
		expect(h.feed.row("live-1")).toMatchObject({
			recentEvents: heavy.recentEvents,
			receipts: heavy.receipts,
			latestAssistant: answer,
		});
		// The list line is the same either way: it shows the answer's start.
		expect(h.screen(200)).toContain("finished row");
		expect(h.screen(200)).toContain("The migration is done. Every table");

		// Peek the finished row (the list is sorted: live first, so move down to it).
		const gets = h.board.getCount;
		await h.press("\x1b[B", "\r");
		await new Promise((resolve) => setTimeout(resolve, 50));
		expect(h.board.getCount).toBeGreaterThan(gets);
		const peek = h.screen(200);
		expect(peek).toContain("event number 5");
		expect(peek).toContain("a message the row got");
		expect(peek).toContain("THE VERY END.");
		expect(h.feed.row("done-1")?.recentEvents).toHaveLength(6);

		// Back to the list: the next change slims it again.
		await h.press("\x1b");
		await h.feed.refresh(["done-1"]);
		expect(h.feed.row("done-1")?.recentEvents).toEqual([]);
	});
});
