/**
 * The page says what the TUI says: its filter words give the rows the TUI's `/` gives (the one filter,
 * runner/row-filter.mjs, over the page's rows against the board's), and a failed row's error is said once.
 */
import { describe, expect, it } from "vitest";
import type { BoardRow } from "../src/board/engine/types.ts";
import { parseFilter, rowMatches } from "../src/board/view-model/list-model.ts";
import * as page from "../runner/row-filter.mjs";
import { pageDetail, pageRow } from "../src/web/server/row-json.ts";
import { makeRow } from "../test-support/fake-board-service.ts";

const ROWS: BoardRow[] = [
	makeRow({ id: "a1", name: "fix login", state: "failed", summary: "Failed: tests", repo: "/src/shop" }),
	makeRow({ id: "a2", name: "write docs", state: "completed", target: "dev" }),
	makeRow({ id: "a3", name: "pick db", state: "needs_input", question: "Which database?", target: "devbox" }),
	makeRow({ id: "a4", name: "refactor", state: "working", model: "faux/faux-2", branch: "agent-board/x" }),
	makeRow({ id: "a5", name: "queued one", state: "queued", cwd: "/home/u/shop" }),
];

describe("the page's filter words", () => {
	it.each([
		"",
		"s:fail",
		"s:need",
		"s:fail s:comp",
		"s:",
		"s:nosuch",
		"s:needs-input",
		"on:dev",
		"on:devbox",
		"on:local",
		"on:local s:work",
		"shop",
		"SHOP login",
		"database",
		"faux-2",
		"agent-board/x",
		"a3",
	])("%j lists what the TUI's / lists", (text) => {
		const tui = ROWS.filter((row) => rowMatches(row, parseFilter(text))).map((row) => row.id);
		const filter = page.parseFilter(text);
		const shown = ROWS.filter((row) => page.matches(pageRow(row), filter)).map((row) => row.id);
		expect(shown).toEqual(tui);
	});
});

describe("a failed row on the page", () => {
	it("says its error once when the summary says it, and keeps one the summary does not say", () => {
		const failed = makeRow({
			state: "failed",
			summary: "Failed: cannot start on h3box2: ssh: connect refused",
			error: "cannot start on h3box2:\n  ssh: connect refused",
		});
		expect(pageRow(failed).error).toBeUndefined();
		expect(pageDetail(failed).error).toBeUndefined();
		// Its events keep what happened, not the ending the summary says.
		const logged = {
			...failed,
			recentEvents: [
				{ at: 1, text: "user: start it" },
				{ at: 2, text: "failed: cannot start on h3box2: ssh: connect refused" },
			],
		};
		expect(pageDetail(logged).events.map((e) => e.text)).toEqual(["user: start it"]);
		const other = { ...failed, summary: "Failed." };
		expect(pageRow(other).error).toBe("cannot start on h3box2:\n  ssh: connect refused");
	});
});

describe("attach on the page", () => {
	it("gives a finished local row the command that opens its session, and a target row where to attach it", () => {
		const local = makeRow({ state: "completed", cwd: "/home/u/shop", sessionFile: "/s/a1.jsonl" });
		expect(pageDetail(local).attach).toBe("cd /home/u/shop && pi --session /s/a1.jsonl");
		// Its session here is the link's mirror: never a command that would open (and write) it.
		const far = makeRow({ state: "completed", target: "box", sessionFile: "/s/a2.jsonl" });
		expect(pageDetail(far).attach).toBe(
			"o on the board (/agent-board) opens a copy of its session in its worktree here; it ran on box",
		);
		expect(
			pageDetail(makeRow({ state: "working", target: "box", sessionFile: "/s/a3.jsonl" })).attach,
		).toBeUndefined();
	});
});
