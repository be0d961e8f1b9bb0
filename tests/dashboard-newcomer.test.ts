/**
 * What a new user trips on, on the board component at a width (#28): the cursor at first paint and
 * when rows change groups, keys that say why they cannot act, Escape and a key read as one alt+key,
 * confirmations that keep the list in sight, notices that wrap, names that win over tokens and age
 * at 80 columns, the form's worktree words and one name for Escape.
 */
import { visibleWidth } from "@earendil-works/pi-tui";
import { describe, expect, it } from "vitest";
import { ConsoleView } from "../src/board/dashboard/console-view.ts";
import { ListView } from "../src/board/dashboard/list-view.ts";
import { PeekView } from "../src/board/dashboard/peek-view.ts";
import { ReplyView } from "../src/board/dashboard/reply-view.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { withSent } from "../src/board/view-model/transcript.ts";
import { harnessPerTest } from "../test-support/dashboard-harness.ts";
import { flushReports, KEY, makeRow } from "../test-support/fake-board-service.ts";

const harness = harnessPerTest();
const CTRL_O = "\x0f";
const cursorLine = (screen: string) => screen.split("\n").find((line) => line.startsWith(">")) ?? "";

/** 16 finished rows newer than the one asking and the one running (the store the issue describes). */
function eighteen(): BoardRow[] {
	const now = Date.now();
	const done = Array.from({ length: 16 }, (_, i) =>
		makeRow({ id: `done-${String(i).padStart(2, "0")}`, name: `finished row ${i}`, lastActivityAt: now - i * 1000 }),
	);
	return [
		...done,
		makeRow({
			id: "asker",
			name: "the asking row",
			state: "needs_input",
			alive: true,
			question: "Which database?",
			lastActivityAt: now - 600_000,
		}),
		makeRow({ id: "runner", name: "the running row", state: "working", alive: true, lastActivityAt: now - 500_000 }),
	];
}

describe("the cursor", () => {
	it("is on the first row of the top group at first paint, though pi's footer read the live rows before the board opened", async () => {
		const rows = eighteen();
		const h = await harness(rows, {
			termRows: 24,
			prepare: async (board, feed) => {
				// As the engine: a live summary and time-sortable ids; the feed already follows the live rows.
				board.liveRows = async () => board.rows.filter((row) => row.alive).map((row) => ({ ...row }));
				board.rowIds = async () => board.rows.map((row) => row.id).sort();
				await feed.start();
			},
		});
		await flushReports();
		expect(cursorLine(h.screen(80))).toContain("the asking row");
		await h.press("r");
		expect(h.top()).toBeInstanceOf(ReplyView);
		expect(h.screen(80)).toContain("Answer the asking row");
	});

	it("stays on its row when that row moves groups (answered, finished)", async () => {
		const h = await harness(eighteen(), { termRows: 24 });
		expect(cursorLine(h.screen(80))).toContain("the asking row");
		h.board.setState("asker", "working", { question: undefined });
		await flushReports();
		expect(cursorLine(h.screen(80))).toContain("the asking row");
		h.board.setState("asker", "completed", { alive: false });
		await flushReports();
		expect(cursorLine(h.screen(80))).toContain("the asking row");
		await h.press("r");
		expect(h.screen(80)).toContain("Reply to the asking row");
	});

	it("mid-navigation keeps its screen line, and a key on the row that slid under it asks again first", async () => {
		let clock = Date.now();
		const h = await harness(eighteen(), { termRows: 24, now: () => clock });
		await h.press(KEY.down, KEY.down, KEY.down);
		const before = h.screen(80).split("\n");
		const line = before.findIndex((l) => l.startsWith(">"));
		const chosen = h.dash.list.selectedRow();
		expect(chosen?.id).toMatch(/^done-/);
		// The chosen row starts asking: it jumps to the top group; the cursor keeps its line.
		h.board.setState(chosen?.id ?? "", "needs_input", { alive: true, question: "Deploy?", lastActivityAt: clock });
		await flushReports();
		const after = h.screen(80).split("\n");
		expect(after.findIndex((l) => l.startsWith(">"))).toBe(line);
		const slid = h.dash.list.selectedRow();
		expect(slid?.id).not.toBe(chosen?.id);
		await h.press("r");
		expect(h.top()).toBeInstanceOf(ListView);
		expect(h.dash.status).toBe(`${slid?.name} just moved under the cursor: press r again to act on it`);
		await h.press("r");
		expect(h.top()).toBeInstanceOf(ReplyView);
		expect(h.screen(80)).toContain(`Reply to ${slid?.name}`);
		// Long after the last move, a change keeps the row, not the line.
		await h.press(KEY.esc);
		clock += 60_000;
		const kept = h.dash.list.selectedRow()?.id;
		h.board.setState(kept ?? "", "needs_input", { alive: true, question: "Now?", lastActivityAt: clock });
		await flushReports();
		expect(h.dash.list.selectedRow()?.id).toBe(kept);
	});
});

describe("keys", () => {
	it("say why they cannot act, from the same table that hides their hint", async () => {
		const h = await harness([makeRow({ id: "plain", name: "no tree here", state: "completed" })], { termRows: 24 });
		await h.press("d");
		expect(h.dash.status).toBe("no tree here has no worktree: no diff");
		await h.press("s");
		expect(h.dash.status).toBe("no tree here is not running");
		await h.press(KEY.enter);
		expect(h.top()).toBeInstanceOf(PeekView);
		const hints = h.dash.render(120).at(-1) ?? "";
		expect(hints).toMatch(/r reply/);
		expect(hints).not.toMatch(/d diff|m merge|s stop|f follow-up/);
		await h.press("m");
		expect(h.dash.status).toBe("no tree here has no worktree: nothing to merge");
	});

	it("Escape and a key that reach pi in one read (an alt+key) are Escape, then the key, where no text field has the keys", async () => {
		const h = await harness(
			[makeRow({ id: "a", name: "alpha" }), makeRow({ id: "b", name: "beta", state: "working", alive: true })],
			{ termRows: 24 },
		);
		await h.press(KEY.enter);
		expect(h.top()).toBeInstanceOf(PeekView);
		await h.press("\x1b/");
		expect(h.top()).toBeInstanceOf(ListView);
		expect(h.screen(80)).toContain("Filter (text");
		await h.press(KEY.esc, KEY.enter, "\x1b\x1b");
		expect(h.results).toEqual([{ kind: "close" }]);
		// In an editor alt+b moves by words: it stays one key.
		const e = await harness([makeRow({ id: "c", name: "gamma", state: "working", alive: true })], { termRows: 24 });
		await e.press("r", "x", "\x1bb");
		expect(e.top()).toBeInstanceOf(ReplyView);
	});
});

describe("at 80x24", () => {
	it("the stop confirmation keeps the list in sight", async () => {
		const h = await harness(eighteen(), { termRows: 24 });
		await h.press(KEY.down, "s");
		const screen = h.screen(80);
		expect(screen).toContain("(y/n) Stop the running row?");
		expect(screen).toMatch(/Needs input \(1\)[\s\S]*the asking row[\s\S]*>.*the running row[\s\S]*\(y\/n\) Stop/);
		expect(h.dash.render(80).length).toBeLessThanOrEqual(20);
		await h.press("y");
		expect(h.board.calls.some((c) => c.method === "stop" && c.args[0] === "runner")).toBe(true);
	});

	it("a notice wraps whole instead of being cut", async () => {
		const h = await harness([makeRow({ id: "a", name: "alpha" })], { termRows: 24 });
		const prompt = "[[callmatch:ask]] :: Deploy to staging once the migration is reviewed and the smoke tests pass";
		await h.press("n", `\x1b[200~${prompt}\x1b[201~`, KEY.enter);
		await flushReports();
		const lines = h.dash.render(80);
		expect(lines.join(" ").replace(/\s+/g, " ")).toContain(`dispatched ${prompt}`);
		for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(80);
	});

	it("tells attempts apart: tokens and age go before the name is cut", async () => {
		const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 123_456, cost: 1.25 };
		const rows = [1, 2, 3].map((index) =>
			makeRow({
				id: `at${index}`,
				name: `Add a greeting to the README [${index}/3]`,
				attempt: { setId: "set-1", index, count: 3 },
				worktreePath: `/tmp/wt/at${index}`,
				branch: `agent-board/at${index}`,
				usage,
				model: "faux/faux-1",
			}),
		);
		const h = await harness(rows, { termRows: 24 });
		const screen = h.screen(80);
		for (const index of [1, 2, 3]) expect(screen).toContain(`Add a greeting to the README [${index}/3]`);
		for (const line of h.dash.render(80)) expect(visibleWidth(line)).toBeLessThanOrEqual(80);
	});

	it("the form's worktree says what its summary says, and Escape is named one way", async () => {
		const h = await harness([makeRow({ id: "a", name: "alpha" })], { termRows: 24, prefs: { worktreeMode: "none" } });
		await h.press("n", CTRL_O);
		let screen = h.screen(80);
		expect(screen).toMatch(/worktree\s+no worktree/);
		expect(screen).toContain("· no worktree · 1 attempt");
		// attempts: 1 -> 2 (name, cwd, where, model, thinking, worktree, attempts).
		await h.press(KEY.down, KEY.down, KEY.down, KEY.down, KEY.down, KEY.down, KEY.enter);
		screen = h.screen(80);
		expect(screen).toMatch(/worktree\s+each in its own worktree/);
		expect(screen.replace(/\s+/g, " ")).toContain("· each in its own worktree · 2 attempts");
		await h.press(KEY.esc, KEY.esc, "/");
		screen = h.screen(80);
		expect(screen).toContain("enter keeps it, escape clears it");
		expect(screen).not.toMatch(/\besc\b/);
	});
});

describe("the live console", () => {
	const words = Array.from({ length: 700 }, (_, i) => `w${String(i).padStart(3, "0")}`).join(" ");

	it("takes the board's whole height at 160x45 and 80x24, its transcript on top and the editor at the bottom", async () => {
		for (const [width, height] of [
			[160, 45],
			[80, 24],
		] as const) {
			const h = await harness([makeRow({ id: "w", name: "watched", state: "working", alive: true })], {
				termRows: height,
			});
			await h.press("o");
			expect(h.top()).toBeInstanceOf(ConsoleView);
			await flushReports();
			const lines = h.dash.render(width);
			// Everything pi leaves the board (its footer keeps 4 rows), and no more.
			expect(lines.length).toBe(height - 4);
			expect(lines[1]).toContain("Console: watched");
			expect(lines[2]).toMatch(/^you\s+hello/);
			// The editor's bottom border sits right above the status and hint lines.
			expect(lines.at(-3)).toMatch(/^─+$/);
		}
	});

	it("follows the stream: a long reply reads whole from where it began, its newest words at the end", async () => {
		const h = await harness(
			[makeRow({ id: "w", name: "watched", state: "working", alive: true, live: { text: words.slice(0, 300) } })],
			{ termRows: 45 },
		);
		await h.press("o");
		for (let end = 650; end <= words.length; end += 350) {
			h.board.setState("w", "working", { live: { text: words.slice(Math.max(0, end - 600), end) } });
			await flushReports();
		}
		h.board.setState("w", "working", { live: { text: words.slice(-600) } });
		await flushReports();
		const screen = h.screen(160);
		expect(screen).toContain("w000 w001");
		expect(screen).toContain("w699");
		expect(screen.replace(/\s+/g, " ")).toContain(words.slice(0, 2000));
	});

	it("keeps an ended reply on screen until the transcript holds it, then shows it once", async () => {
		const reply = "The whole reply, streamed and then written to the session.";
		let session: { role: "user" | "assistant"; text: string }[] = [{ role: "user", text: "do it" }];
		const h = await harness(
			[makeRow({ id: "w", name: "watched", state: "working", alive: true, live: { text: reply } })],
			{ termRows: 24, readTranscript: async () => session },
		);
		await h.press("o");
		const view = h.top() as ConsoleView;
		await view.reload();
		expect(h.screen(80)).toContain(reply);
		// The status no longer streams it, but the session file does not have it yet: it stays.
		h.board.setState("w", "working", { live: {} });
		await flushReports();
		await view.reload();
		expect(h.screen(80)).toContain(reply);
		session = [...session, { role: "assistant", text: reply }];
		await view.reload();
		expect(h.screen(80).split(reply).length - 1).toBe(1);
	});

	it("shows a steer it sent at once, marked waiting, until the agent takes it", async () => {
		const h = await harness([makeRow({ id: "w", name: "watched", state: "working", alive: true })], {
			termRows: 24,
			readTranscript: async (row) => withSent([{ role: "user", text: "do the job" }], [], row.receipts ?? []),
		});
		await h.press("o", ..."also print the total", KEY.enter);
		h.board.setState("w", "working", {
			receipts: [{ id: "m1", status: "delivered", as: "steer", at: Date.now(), preview: "also print the total" }],
		});
		await flushReports();
		await (h.top() as ConsoleView).reload();
		expect(h.screen(80)).toMatch(/^you\s+\(steer, lands after the current step\) also print the total/m);
	});
});
