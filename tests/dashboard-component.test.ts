import { visibleWidth } from "@earendil-works/pi-tui";
import { describe, expect, it } from "vitest";
import { ConsoleView } from "../src/board/dashboard/console-view.ts";
import { DispatchOptionsView } from "../src/board/dashboard/dispatch-options.ts";
import { DispatchView } from "../src/board/dashboard/dispatch-view.ts";
import { HelpView } from "../src/board/dashboard/help-view.ts";
import { ListView } from "../src/board/dashboard/list-view.ts";
import { PeekView } from "../src/board/dashboard/peek-view.ts";
import { ReplyView } from "../src/board/dashboard/reply-view.ts";
import { TranscriptView } from "../src/board/dashboard/viewer-view.ts";
import { type DashboardHarness, harnessPerTest } from "../test-support/dashboard-harness.ts";
import { flushReports, KEY, makeRow } from "../test-support/fake-board-service.ts";

const harness = harnessPerTest();

const type = (text: string): string[] => [...text];
const CTRL_O = "\x0f";
const listed = (h: DashboardHarness) => h.dash.list.model.rows().map((row) => row.id);

const wideRows = () => [
	makeRow({
		id: "q1",
		name: "\u{1F680} ask \u6F22\u5B57\u6F22\u5B57 about db",
		state: "needs_input",
		question: "Postgres or SQLite?",
		questionOptions: ["Postgres", "SQLite"],
		alive: true,
	}),
	makeRow({
		id: "w1",
		name: "busy worker",
		state: "working",
		alive: true,
		currentTool: "bash: npm test",
		model: "faux/faux-1",
	}),
	makeRow({
		id: "c1",
		name: "finished",
		state: "completed",
		latestAssistant: "All tests pass.",
		usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2048, cost: 0.5 },
	}),
	makeRow({
		id: "t1",
		name: "tree row",
		state: "completed",
		worktreePath: "/tmp/wt/t1",
		branch: "board/t1",
		diff: { added: 3, removed: 1, files: 1 },
	}),
];

describe("dashboard component", () => {
	it("keeps every line within the width in every view at 40, 60, 80, 120, 200 and 300 columns", async () => {
		const views: string[][] = [
			[],
			[KEY.enter],
			["t"],
			["d"],
			["?"],
			["S"],
			["n", ...type("a prompt")],
			["n", CTRL_O],
			["/", ...type("s:need")],
			["r"],
			["s"],
			["c"],
			[KEY.down, KEY.down, KEY.down, "m"],
			[KEY.down, "o"],
		];
		// Rows on targets too: a column for where each runs, and an unreachable one's reason.
		const targetRows = () => [
			makeRow({
				id: "x1",
				name: "on the dev box",
				state: "working",
				alive: true,
				target: "dev-box-with-a-long-name",
				live: { waitingSince: Date.now() - 5000 },
			}),
			makeRow({
				id: "u1",
				name: "cut off",
				state: "working",
				alive: true,
				target: "dev",
				unreachable: {
					since: Date.now() - 60_000,
					reason: `ssh: connect to host dev port 22: ${"Connection refused ".repeat(8)}`,
				},
			}),
		];
		for (const keys of views) {
			const fresh = await harness([...wideRows(), ...targetRows()], {
				targetNames: () => ["dev", "dev-box-with-a-long-name"],
			});
			await fresh.press(...keys);
			await flushReports();
			for (const width of [40, 60, 80, 120, 200, 300]) {
				const lines = fresh.dash.render(width);
				expect(lines.length).toBeGreaterThan(2);
				for (const line of lines)
					expect(visibleWidth(line), `${keys.join("")} at ${width}: ${line}`).toBeLessThanOrEqual(width);
			}
		}
	});

	it("lists needs-input first, peeks the question with its choices and answers with a picked choice", async () => {
		const h = await harness(wideRows());
		const screen = h.screen();
		expect(screen.indexOf("Needs input")).toBeLessThan(screen.indexOf("Working"));
		expect(screen).toContain("Postgres or SQLite? [Postgres / SQLite]");
		await h.press(KEY.enter);
		expect(h.top()).toBeInstanceOf(PeekView);
		expect(h.screen()).toContain("Question:");
		expect(h.screen()).toMatch(/2\. SQLite/);
		expect(h.board.calls.some((c) => c.method === "markViewed" && c.args[0] === "q1")).toBe(true);
		await h.press("r");
		expect(h.screen()).toContain("Answer");
		await h.press(KEY.tab, KEY.tab, KEY.enter);
		expect(h.board.calls.find((c) => c.method === "reply")?.args).toEqual(["q1", "SQLite"]);
		expect(h.top()).toBeInstanceOf(PeekView);
	});

	it("the answer box shows a long question whole, wrapped, with its choices, above the editor; tab without choices says so", async () => {
		const question = `${"Which of the storage engines should the cache layer use, given the read-heavy workload and the nightly batch jobs? ".repeat(3)}END-OF-QUESTION`;
		expect(question.length).toBeGreaterThanOrEqual(300);
		const h = await harness(
			[
				makeRow({
					id: "q1",
					name: "asker",
					state: "needs_input",
					alive: true,
					question,
					questionOptions: ["Postgres", "SQLite"],
				}),
				makeRow({ id: "w1", state: "working", alive: true }),
			],
			{ termRows: 24 },
		);
		await h.press("r");
		const screen = h.dash.render(80).join("\n");
		expect(screen).toContain("END-OF-QUESTION");
		expect(screen.replace(/\s+/g, " ")).toContain(question.replace(/\s+/g, " ").slice(0, 200));
		expect(screen).toMatch(/1\. Postgres[\s\S]*2\. SQLite[\s\S]*─/);
		await h.press(KEY.esc, KEY.down, "r", KEY.tab);
		expect(h.dash.status).toBe("no choices offered: type your answer");
	});

	it("reply is multi-line: a bracketed paste and shift+enter keep their newlines", async () => {
		const h = await harness(wideRows());
		await h.press(
			KEY.down,
			"r",
			"\x1b[200~Line one of the task\nLine two: details\x1b[201~",
			KEY.shiftEnter,
			...type("three"),
			KEY.enter,
		);
		expect(h.board.calls.find((c) => c.method === "reply")?.args).toEqual([
			"w1",
			"Line one of the task\nLine two: details\nthree",
		]);
		expect(h.dash.status).toContain("steered busy worker");
		await h.press("f", ...type("after that, run lint"), KEY.enter);
		expect(h.board.calls.filter((c) => c.method === "reply")[1]?.args).toEqual([
			"w1",
			"after that, run lint",
			{ followUp: true },
		]);
	});

	it("a reply the service refuses stays in the editor with the reason", async () => {
		const h = await harness(wideRows());
		h.board.replyError = new Error("row w1 is archived");
		await h.press(KEY.down, "r", ...type("keep me"), KEY.enter);
		const reply = h.top();
		expect(reply).toBeInstanceOf(ReplyView);
		expect((reply as ReplyView).editor.getText()).toBe("keep me");
		expect(h.screen()).toContain("not sent: row w1 is archived");
		await h.press(KEY.enter);
		expect(h.top()).toBeInstanceOf(ListView);
		expect(h.board.calls.filter((c) => c.method === "reply")).toHaveLength(2);
	});

	it("moves the selection with pi's select keys and stops a running row after confirm", async () => {
		const h = await harness(wideRows());
		await h.press(KEY.down);
		expect(h.dash.list.selectedRow()?.id).toBe("w1");
		await h.press("s");
		expect(h.screen()).toContain("(y/n) Stop busy worker?");
		await h.press("n");
		expect(h.board.calls.some((c) => c.method === "stop")).toBe(false);
		await h.press("s", "y");
		await flushReports();
		expect(h.board.calls.find((c) => c.method === "stop")?.args).toEqual(["w1"]);
		expect(h.screen()).toContain("Stopped (1)");
	});

	it("archives, hides, shows archived with A and unarchives", async () => {
		const h = await harness(wideRows());
		await h.press(KEY.down, KEY.down, "a");
		await flushReports();
		expect(listed(h)).not.toContain("c1");
		await h.press("A");
		expect(h.screen()).toContain("[archived]");
		h.dash.list.select("c1");
		await h.press("a", "A");
		await flushReports();
		expect(listed(h)).toContain("c1");
		expect(h.screen()).not.toContain("[archived]");
		expect(h.board.calls.map((c) => c.method)).toEqual(expect.arrayContaining(["archive", "unarchive"]));
	});

	it("filters by text and state as you type, and escape clears the filter", async () => {
		const h = await harness(wideRows());
		await h.press("/", ...type("s:work"));
		expect(listed(h)).toEqual(["w1"]);
		await h.press(KEY.enter);
		expect(h.screen()).toContain("filter: s:work");
		await h.press(KEY.esc);
		expect(listed(h)).toHaveLength(4);
		expect(h.results).toEqual([]);
		await h.press("/", ...type("tree"), KEY.enter);
		expect(listed(h)).toEqual(["t1"]);
	});

	it("n, a prompt, enter starts the agent with the remembered choices shown above the editor", async () => {
		const h = await harness(wideRows(), { prefs: { cwd: "/tmp/proj", model: "faux/faux-2", worktreeMode: "none" } });
		await h.press("n");
		expect(h.top()).toBeInstanceOf(DispatchView);
		expect(h.screen()).toContain("in /tmp/proj · local · faux/faux-2 · no worktree · 1 attempt");
		expect(h.screen()).toMatch(/enter start .*ctrl\+o options/);
		await h.press(KEY.enter);
		expect(h.screen()).toContain("type a prompt first");
		await h.press(...type("fix the flaky test"), KEY.enter);
		await flushReports();
		expect(h.board.calls.filter((c) => c.method === "dispatch").map((c) => c.args[0])).toEqual([
			{ prompt: "fix the flaky test", cwd: "/tmp/proj", model: "faux/faux-2", worktreeMode: "none" },
		]);
		expect(h.top()).toBeInstanceOf(ListView);
		expect(h.dash.list.selectedRow()?.name).toBe("fix the flaky test");
	});

	it("the options list says which key starts, and starts from anywhere in it; choices are remembered", async () => {
		const h = await harness(wideRows());
		await h.press("n", "\x1b[200~fix the flaky test\nthen run it 10 times\x1b[201~", CTRL_O);
		expect(h.top()).toBeInstanceOf(DispatchOptionsView);
		expect(h.screen()).toContain("s starts the agent from anywhere in this list");
		// name (submenu: "s" is typed, not a start), past cwd and where, model x2, thinking off, worktree auto, attempts 2
		await h.press(
			KEY.enter,
			...type("flakys"),
			KEY.enter,
			KEY.down,
			KEY.down,
			KEY.down,
			KEY.enter,
			KEY.enter,
			KEY.down,
			KEY.enter,
			KEY.down,
			KEY.enter,
			KEY.down,
			KEY.enter,
		);
		expect(h.board.calls.filter((c) => c.method === "dispatch")).toHaveLength(0);
		await h.press("s");
		await flushReports();
		const calls = h.board.calls.filter((c) => c.method === "dispatch");
		expect(calls).toHaveLength(2);
		expect(calls[0]?.args[0]).toEqual({
			prompt: "fix the flaky test\nthen run it 10 times",
			name: "flakys",
			cwd: "/tmp/here",
			model: "faux/faux-2",
			thinking: "off",
			worktreeMode: "auto",
		});
		expect(h.screen()).toContain("dispatched 2 attempts of flakys");
		expect(h.saved[0]).toMatchObject({
			cwd: "/tmp/here",
			model: "faux/faux-2",
			thinking: "off",
			worktreeMode: "auto",
		});
	});

	it("merges a worktree row after showing its plan and the conflict check, then offers to remove the worktree; compare lists the row", async () => {
		const h = await harness(wideRows(), { mergeConflicts: async () => ["README.md"] });
		await h.press("m");
		expect(h.screen()).toContain("has no worktree: nothing to merge");
		await h.press(KEY.down, KEY.down, KEY.down);
		expect(h.dash.list.selectedRow()?.id).toBe("t1");
		await h.press("c");
		await flushReports();
		expect(h.screen()).toMatch(/^Compare 1 attempt/m);
		expect(h.screen()).toMatch(/^> +\+ completed {2}\+3 -1 1f {2}t1 {2}tree row/m);
		await h.press("m");
		await flushReports();
		expect(h.screen().replace(/\n/g, " ")).toContain(
			"(y/n) Merge tree row (board/t1) into main: 1 commit, 0 files; will conflict in README.md",
		);
		expect(h.board.calls.filter((c) => c.method === "merge").map((c) => c.args[1])).toEqual([{ dryRun: true }]);
		await h.press("y");
		await flushReports();
		expect(h.board.calls.filter((c) => c.method === "merge").map((c) => c.args[1])).toEqual([
			{ dryRun: true },
			{ commit: false },
		]);
		expect(h.screen()).toContain("(y/n) Merged. Remove its worktree /tmp/wt/t1?");
		await h.press("n");
		await flushReports();
		expect(h.screen()).toMatch(/merged → main/);
		await h.press(KEY.esc);
		expect(h.top()).toBeInstanceOf(ListView);
		expect(h.screen()).toContain("[merged → main]");
	});

	it("renames, pins, and shows transcript, diff and help with the configured keys", async () => {
		const h = await harness(wideRows());
		await h.press(KEY.down, KEY.down, "R", "\x15", ...type("renamed row"), KEY.enter);
		expect(h.board.calls.find((c) => c.method === "rename")?.args).toEqual(["c1", "renamed row"]);
		await flushReports();
		await h.press("p");
		await flushReports();
		expect(h.screen().split("\n")[1]).toContain("Pinned (1)");
		await h.press("t");
		await flushReports();
		expect(h.screen()).toContain("Hi, I am the row's agent.");
		await h.press(KEY.esc);
		await h.press(KEY.down, KEY.down, KEY.down, "d");
		await flushReports();
		expect(h.screen()).toMatch(/\+2 added line/);
		expect(h.screen()).toMatch(/-2 removed line/);
		await h.press(KEY.esc, "?");
		for (const key of ["n", "r", "f", "s", "a", "A", "R", "p", "/", "t", "d", "w", "c", "m", "o", "b", "S", "?"])
			expect(h.screen(200)).toMatch(new RegExp(`^  ${key.replace(/[?/]/, "\\$&")}\\s`, "m"));
		expect(h.screen(200)).toMatch(/^ {2}escape\S*\s+clear the filter/m);
		// No key runs into its text, at any width.
		expect(h.screen(60)).not.toMatch(/pageDown\S/);
		await h.press(KEY.esc);
		expect(h.top()).toBeInstanceOf(ListView);
	});

	it("open: a finished row attaches, a running row opens its live console (not stopped); b goes back only when attached", async () => {
		const h = await harness(wideRows());
		await h.press(KEY.down, KEY.down, "o");
		expect(h.results).toEqual([{ kind: "attach", row: expect.objectContaining({ id: "c1" }) }]);
		await h.press("b");
		expect(h.dash.status).toContain("nothing to go back to");
		const live = await harness(wideRows(), { attachedId: "c1", canGoBack: true });
		expect(live.screen()).toMatch(/^ ?>?@\+ finished/m);
		expect(live.screen()).toContain("b back to your session");
		await live.press(KEY.down, "o");
		expect(live.top()).toBeInstanceOf(ConsoleView);
		expect(live.board.calls.some((c) => c.method === "stop")).toBe(false);
		await flushReports();
		expect(live.screen()).toContain("Console: busy worker");
		expect(live.screen()).toContain("Hi, I am the row's agent.");
		await live.press(...type("use the v2 api"), KEY.enter);
		expect(live.board.calls.find((c) => c.method === "reply")?.args).toEqual(["w1", "use the v2 api"]);
		expect(live.top()).toBeInstanceOf(ConsoleView);
		await live.press(...type("then lint"), "\x1b\r");
		expect(live.board.calls.filter((c) => c.method === "reply")[1]?.args).toEqual([
			"w1",
			"then lint",
			{ followUp: true },
		]);
		await live.press(KEY.esc);
		expect(live.top()).toBeInstanceOf(ListView);
		expect(live.results).toEqual([]);
		await live.press("b");
		expect(live.results[0]).toEqual({ kind: "back" });
	});

	it("settings: each entry reads and writes the board's settings, saved at once", async () => {
		const saved: unknown[] = [];
		const h = await harness(wideRows(), {
			settings: { strip: true, notices: true, osNotify: true },
			saveSettings: (settings) => saved.push(settings),
		});
		await h.press("S");
		expect(h.screen()).toMatch(/live strip below the editor.*on/);
		await h.press(KEY.enter);
		expect(saved).toEqual([{ strip: false, notices: true, osNotify: true }]);
		expect(h.screen()).toMatch(/live strip below the editor.*off/);
		await h.press(KEY.esc);
		expect(h.top()).toBeInstanceOf(ListView);
	});

	it("follows the shared feed: a reported row is re-read alone, never a full list", async () => {
		const h = await harness(wideRows());
		const lists = h.board.listCount;
		h.board.setState("w1", "completed", { alive: false, summary: "worker finished" });
		await flushReports();
		expect(h.board.listCount).toBe(lists);
		expect(h.board.getCount).toBe(1);
		expect(h.screen()).toContain("worker finished");
		expect(h.screen()).not.toContain("Working (");
		await h.press("q");
		expect(h.results).toEqual([{ kind: "close" }]);
	});

	it("ticks: ages move on a repaint with no store read and no key", async () => {
		let now = Date.now();
		const h = await harness(
			[makeRow({ id: "w1", name: "ticker", state: "working", alive: true, lastActivityAt: now - 2000 })],
			{ now: () => now, tickMs: 20 },
		);
		expect(h.screen()).toMatch(/ticker.*\b2s\b/);
		const reads = h.board.listCount + h.board.getCount;
		const renders = h.renders.count;
		now += 28_000;
		await new Promise((resolve) => setTimeout(resolve, 60));
		expect(h.renders.count).toBeGreaterThan(renders);
		expect(h.screen()).toMatch(/ticker.*\b30s\b/);
		expect(h.board.listCount + h.board.getCount).toBe(reads);
	});
});

describe("dashboard views", () => {
	it("transcript follows the end, scrolls back, and help inside it returns to it and then to peek", async () => {
		const long = Array.from({ length: 80 }, (_, i) => ({ role: "assistant" as const, text: `line ${i}` }));
		const h = await harness([makeRow({ id: "c1", name: "long one" })], {
			termRows: 20,
			readTranscript: async () => long,
		});
		await h.press(KEY.enter, "t");
		await flushReports();
		let screen = h.screen(80);
		expect(screen).toContain("line 79");
		expect(screen).not.toContain("line 0\n");
		await h.press("g");
		screen = h.screen(80);
		expect(screen).toMatch(/agent\s+line 0\s*$/m);
		expect(screen).not.toContain("line 79");
		await h.press("?");
		expect(h.top()).toBeInstanceOf(HelpView);
		await h.press(KEY.esc);
		expect(h.top()).toBeInstanceOf(TranscriptView);
		await h.press(KEY.esc);
		expect(h.top()).toBeInstanceOf(PeekView);
		await h.press(KEY.esc);
		expect(h.top()).toBeInstanceOf(ListView);
	});
});
