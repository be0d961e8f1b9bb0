import { KeybindingsManager, TUI_KEYBINDINGS, visibleWidth } from "@earendil-works/pi-tui";
import { describe, expect, it } from "vitest";
import type { BoardRow } from "../src/board/types.ts";
import { Dashboard, type DashboardResult } from "../src/board/ui/dashboard.ts";
import type { DispatchPrefs } from "../src/board/ui/prefs.ts";
import { createFakeBoard, type FakeBoard, makeRow } from "../test-support/fake-board-service.ts";

const KEY = { up: "\x1b[A", down: "\x1b[B", left: "\x1b[D", right: "\x1b[C", enter: "\r", esc: "\x1b" };
const plainTheme = { fg: (_color: string, text: string) => text, bold: (text: string) => text };

async function settle(): Promise<void> {
	for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

interface Harness {
	dash: Dashboard;
	board: FakeBoard;
	results: DashboardResult[];
	saved: DispatchPrefs[];
	press(...keys: string[]): Promise<void>;
	screen(width?: number): string;
}

async function harness(rows: BoardRow[], height = 30): Promise<Harness> {
	const board = createFakeBoard(rows);
	const results: DashboardResult[] = [];
	const saved: DispatchPrefs[] = [];
	const dash = new Dashboard({
		service: board,
		theme: plainTheme,
		keys: new KeybindingsManager(TUI_KEYBINDINGS),
		requestRender: () => undefined,
		done: (result) => results.push(result),
		height: () => height,
		cwd: "/tmp/here",
		models: ["faux/faux-1", "faux/faux-2"],
		prefs: {},
		savePrefs: async (prefs) => {
			saved.push(prefs);
		},
		readTranscript: async () => [
			{ role: "user", text: "hello" },
			{ role: "assistant", text: "Hi, I am the row's agent." },
		],
		readDiff: async () => ["diff --git a/x b/x", "+added line", "-removed line"],
	});
	await dash.poll();
	return {
		dash,
		board,
		results,
		saved,
		async press(...keys) {
			for (const key of keys) {
				dash.handleInput(key);
				await settle();
			}
		},
		screen(width = 120) {
			return dash.render(width).join("\n");
		},
	};
}

function type(text: string): string[] {
	return [...text];
}

const wideRows = () => [
	makeRow({ id: "q1", name: "\u{1F680} ask \u6F22\u5B57\u6F22\u5B57 about db", state: "needs_input", question: "Postgres or SQLite?", alive: false }),
	makeRow({ id: "w1", name: "busy worker", state: "working", alive: true, currentTool: "bash: npm test", model: "faux/faux-1" }),
	makeRow({ id: "c1", name: "finished", state: "completed", latestAssistant: "All tests pass.", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2048, cost: 0.5 } }),
	makeRow({ id: "t1", name: "tree row", state: "completed", worktreePath: "/tmp/wt/t1", branch: "board/t1", diff: { added: 3, removed: 1, files: 1 } }),
];

describe("dashboard component", () => {
	it("keeps every line within the width in every mode at 40, 80, 120 and 300 columns", async () => {
		const h = await harness(wideRows());
		const modes: string[][] = [[], [KEY.enter], ["t"], ["d"], ["?"], ["n", ...type("a prompt"), KEY.enter], ["/", ...type("s:need")], ["r"], ["s"]];
		for (const keys of modes) {
			const fresh = await harness(wideRows());
			await fresh.press(...keys);
			for (const width of [40, 80, 120, 300]) {
				const lines = fresh.dash.render(width);
				expect(lines.length).toBeGreaterThan(2);
				for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
			}
		}
		expect(h.screen()).toContain("Needs input (1)");
	});

	it("lists needs-input first, peeks the question and replies inline", async () => {
		const h = await harness(wideRows());
		const screen = h.screen();
		expect(screen.indexOf("Needs input")).toBeLessThan(screen.indexOf("Working"));
		expect(screen).toContain("Postgres or SQLite?");
		await h.press(KEY.enter);
		expect(h.dash.mode).toBe("peek");
		expect(h.screen()).toContain("Question:");
		expect(h.board.calls.some((c) => c.method === "markViewed" && c.args[0] === "q1")).toBe(true);
		await h.press("r", ...type("use sqlite"), KEY.enter);
		expect(h.board.calls.find((c) => c.method === "reply")?.args).toEqual(["q1", "use sqlite"]);
		expect(h.screen()).toContain("replied to");
	});

	it("moves the selection with pi's select keys and stops a running row after confirm", async () => {
		const h = await harness(wideRows());
		await h.press(KEY.down);
		expect(h.dash.selectedRow()?.id).toBe("w1");
		await h.press("s");
		expect(h.screen()).toContain("(y/n) Stop busy worker?");
		await h.press("n");
		expect(h.board.calls.some((c) => c.method === "stop")).toBe(false);
		await h.press("s", "y");
		expect(h.board.calls.find((c) => c.method === "stop")?.args).toEqual(["w1"]);
		expect(h.screen()).toContain("Stopped (1)");
	});

	it("archives, hides, shows archived with A and unarchives", async () => {
		const h = await harness(wideRows());
		await h.press(KEY.down, KEY.down, "a");
		expect(h.dash.visibleRows.map((row) => row.id)).not.toContain("c1");
		expect(h.screen()).not.toContain("+ finished");
		await h.press("A");
		expect(h.screen()).toContain("[archived]");
		const index = h.dash.visibleRows.findIndex((row) => row.id === "c1");
		h.dash.selected = index;
		await h.press("a", "A");
		expect(h.dash.visibleRows.map((row) => row.id)).toContain("c1");
		expect(h.screen()).not.toContain("[archived]");
		expect(h.board.calls.map((c) => c.method)).toEqual(expect.arrayContaining(["archive", "unarchive"]));
	});

	it("filters by text and state, and escape clears the filter", async () => {
		const h = await harness(wideRows());
		await h.press("/", ...type("s:work"), KEY.enter);
		expect(h.dash.visibleRows.map((row) => row.id)).toEqual(["w1"]);
		await h.press(KEY.esc);
		expect(h.dash.visibleRows).toHaveLength(4);
		expect(h.results).toEqual([]);
		await h.press("/", ...type("tree"), KEY.enter);
		expect(h.dash.visibleRows.map((row) => row.id)).toEqual(["t1"]);
	});

	it("dispatches from the prompt and form, remembering the choices", async () => {
		const h = await harness([]);
		expect(h.screen()).toContain("Press n to dispatch");
		await h.press("n", KEY.enter);
		expect(h.screen()).toContain("type a prompt first");
		await h.press(...type("fix the flaky test"), KEY.enter);
		await h.press(...type("flaky"), KEY.down, KEY.down, KEY.right, KEY.right, KEY.down, KEY.right, KEY.down, KEY.right, KEY.enter);
		const call = h.board.calls.find((c) => c.method === "dispatch");
		expect(call?.args[0]).toEqual({ prompt: "fix the flaky test", name: "flaky", cwd: "/tmp/here", model: "faux/faux-2", thinking: "off", worktreeMode: "auto" });
		expect(h.saved[0]).toEqual({ cwd: "/tmp/here", model: "faux/faux-2", thinking: "off", worktreeMode: "auto" });
		expect(h.screen()).toContain("flaky");
	});

	it("renames, pins, and shows transcript, diff and help", async () => {
		const h = await harness(wideRows());
		await h.press(KEY.down, KEY.down, "R", "\x15", ...type("renamed row"), KEY.enter);
		expect(h.board.calls.find((c) => c.method === "rename")?.args).toEqual(["c1", "renamed row"]);
		await h.press("p");
		expect(h.screen().split("\n")[1]).toContain("Pinned (1)");
		await h.press("t");
		expect(h.screen()).toContain("Hi, I am the row's agent.");
		await h.press(KEY.esc, "d");
		expect(h.screen()).toContain("+added line");
		await h.press(KEY.esc, "?");
		for (const key of ["n", "r", "s", "a", "A", "R", "p", "/", "t", "d", "w", "o", "?"]) expect(h.screen()).toMatch(new RegExp(`^  ${key.replace(/[?/]/, "\\$&")}\\s`, "m"));
		await h.press("x");
		expect(h.dash.mode).toBe("list");
	});

	it("attaches: a finished row resolves at once, a live row is stopped after confirm", async () => {
		const h = await harness(wideRows());
		await h.press("o");
		expect(h.results).toEqual([{ kind: "attach", row: expect.objectContaining({ id: "q1" }) }]);
		const live = await harness(wideRows());
		await live.press(KEY.down, "o");
		expect(live.results).toEqual([]);
		expect(live.screen()).toContain("Stop it and attach?");
		await live.press("y");
		expect(live.board.calls.find((c) => c.method === "stop")?.args).toEqual(["w1"]);
		expect(live.results[0]).toEqual({ kind: "attach", row: expect.objectContaining({ id: "w1", state: "stopped" }) });
	});

	it("polls cheaply: re-lists only when the version changed, and repaints state changes", async () => {
		const h = await harness(wideRows());
		const before = h.board.listCount;
		expect(await h.dash.poll()).toBe(false);
		expect(h.board.listCount).toBe(before);
		h.board.setState("w1", "completed", { alive: false, summary: "worker finished" });
		expect(await h.dash.poll()).toBe(true);
		expect(h.screen()).toContain("worker finished");
		expect(h.screen()).not.toContain("Working (");
		await h.press("q");
		expect(h.results).toEqual([{ kind: "close" }]);
	});
});

describe("dashboard viewers", () => {
	it("transcript follows the end, scrolls back, and help inside it returns to it and then to peek", async () => {
		const long = Array.from({ length: 80 }, (_, i) => ({ role: "assistant" as const, text: `line ${i}` }));
		const board = createFakeBoard([makeRow({ id: "c1", name: "long one" })]);
		const dash = new Dashboard({
			service: board,
			theme: plainTheme,
			keys: new KeybindingsManager(TUI_KEYBINDINGS),
			requestRender: () => undefined,
			done: () => undefined,
			height: () => 20,
			cwd: "/",
			models: [],
			prefs: {},
			savePrefs: async () => undefined,
			readTranscript: async () => long,
			readDiff: async () => [],
		});
		await dash.poll();
		const press = async (...keys: string[]) => {
			for (const key of keys) {
				dash.handleInput(key);
				await settle();
			}
		};
		await press(KEY.enter, "t");
		let screen = dash.render(80).join("\n");
		expect(screen).toContain("line 79");
		expect(screen).not.toContain("line 0\n");
		await press("g");
		screen = dash.render(80).join("\n");
		expect(screen).toMatch(/agent\s+line 0\s*$/m);
		expect(screen).not.toContain("line 79");
		await press("?");
		expect(dash.mode).toBe("help");
		await press("x");
		expect(dash.mode).toBe("transcript");
		await press(KEY.esc);
		expect(dash.mode).toBe("peek");
		await press(KEY.esc);
		expect(dash.mode).toBe("list");
	});
});
