import { visibleWidth } from "@earendil-works/pi-tui";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { BoardRow } from "../src/board/engine/types.ts";
import { BoardFeed } from "../src/board/view-model/feed.ts";
import { osNotifySequence, resolveSettings } from "../src/board/presence/notify.ts";
import { stripLines } from "../src/board/presence/strip.ts";
import { parseTranscript } from "../src/board/view-model/transcript.ts";
import { BoardPresence, notificationText } from "../src/board/presence/presence.ts";
import { harnessPerTest } from "../test-support/dashboard-harness.ts";
import { createFakeBoard, flushReports, KEY, makeRow, plainTheme } from "../test-support/fake-board-service.ts";

const WIDTHS = [60, 80, 120, 200];
const harness = harnessPerTest();

/** A theme that shows which colour each piece got, so tests can tell a warning from an accent. */
const taggedTheme = {
	fg: (color: string, text: string) => `\x1b[0m${color === "warning" ? "\x1b[33m" : ""}${text}`,
	bold: (text: string) => text,
};

const now = Date.now();
// Ages ("bash 12s") are read from the clock at render time: the clock stands still at `now`, so a slow
// machine between building the rows and rendering them does not make them 13s.
beforeAll(() => {
	vi.useFakeTimers({ now, toFake: ["Date"] });
});
afterAll(() => {
	vi.useRealTimers();
});
const rows = (): BoardRow[] => [
	makeRow({
		id: "q1",
		name: "pick a database",
		state: "needs_input",
		alive: true,
		question: "Postgres or SQLite?",
		questionOptions: ["Postgres", "SQLite"],
	}),
	makeRow({
		id: "w1",
		name: "streaming worker",
		state: "working",
		alive: true,
		model: "faux/faux-1",
		modelUsed: "faux/faux-2",
		live: {
			text: "I am reading the parser now and",
			tool: { name: "bash", detail: "npm test", startedAt: now - 12_000 },
		},
		receipts: [{ id: "m1", status: "delivered", as: "steer", at: now - 5000, preview: "use the new API" }],
	}),
	makeRow({ id: "s1", name: "stalled worker", state: "working", alive: true, live: { waitingSince: now - 45_000 } }),
	makeRow({
		id: "c1",
		name: "finished",
		state: "completed",
		summary: "Done.",
		latestAssistant:
			"Done. I read the project, made the change and ran the tests: all 42 pass.\n\n**Summary**: small.",
	}),
	makeRow({
		id: "t1",
		name: "tree row",
		state: "completed",
		worktreePath: "/tmp/wt/t1",
		branch: "board/t1",
		diff: { added: 1234, removed: 567, files: 89 },
	}),
];

async function view(keys: string[], width: number): Promise<string[]> {
	const h = await harness(rows());
	await h.press(...keys);
	return h.dash.render(width);
}

describe("dashboard views at 60, 80, 120 and 200 columns", () => {
	it("list: fits, keeps ? visible, grows columns, shows live text and the whole answer", async () => {
		for (const width of WIDTHS) {
			const lines = await view([], width);
			for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
			const text = lines.join("\n");
			expect(lines.at(-1)).toContain("? help");
			expect(text).toMatch(/streaming worker.*bash 12s/);
			if (width >= 80) expect(text).toMatch(/stalled worker.*waiting for the model 45s/);
			// One row's diff column never pushes the location column off the other rows.
			const finished = lines.find((line) => line.includes("finished")) ?? "";
			if (width >= 120) expect(finished).toMatch(/work\s*$/);
			if (width === 200) {
				expect(finished).toContain("all 42 pass. **Summary**: small.");
				expect(text).toContain("+1234 -567 89f");
			}
		}
	});

	it("peek: live tool with its age, streaming text, receipts, the model that ran", async () => {
		for (const width of WIDTHS) {
			const lines = await view([KEY.down, KEY.down, KEY.enter], width);
			for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
			const text = lines.join("\n");
			expect(text).toMatch(/now\s+bash 12s/);
			expect(text).toContain("Streaming (newest words):");
			expect(text).toContain("I am reading the parser");
			expect(text).toMatch(/✓ delivered as steer 5s ago/);
			expect(text).toMatch(/model\s+faux\/faux-2 \(asked for faux\/faux-1\)/);
		}
	});

	it("peek of a finished row renders the answer as Markdown", async () => {
		const lines = await view([KEY.down, KEY.down, KEY.down, KEY.enter], 80);
		const text = lines.join("\n");
		expect(text).toContain("Latest answer:");
		expect(text).toContain("Summary: small.");
		expect(text).not.toContain("**Summary**");
	});

	it("reply dialog, transcript, diff, help, dispatch and settings fit every width", async () => {
		const modes: string[][] = [
			["r"],
			["t"],
			[KEY.down, KEY.down, KEY.down, KEY.down, "d"],
			["?"],
			["n"],
			["n", "x", KEY.enter],
			["S"],
		];
		for (const keys of modes) {
			for (const width of WIDTHS) {
				const lines = await view(keys, width);
				for (const line of lines)
					expect(visibleWidth(line), `${keys.join("")} at ${width}: ${line}`).toBeLessThanOrEqual(width);
			}
		}
		expect((await view(["r"], 80)).join("\n")).toMatch(/1\. Postgres\n {2}2\. SQLite/);
		expect((await view(["S"], 80)).join("\n")).toContain("OS notifications");
	});

	it("a needs-input row is not styled as a warning", async () => {
		const h = await harness(rows(), { theme: taggedTheme });
		const line = h.dash.render(120).find((l) => l.includes("pick a database")) ?? "";
		expect(line).not.toContain("\x1b[33m");
		const note = notificationText({ row: rows()[0] as BoardRow, from: "working" });
		expect(note.type).toBe("info");
	});
});

describe("shared feed, strip and notifications", () => {
	it("the presence, strip and dashboard read one feed; a report re-reads only its row", async () => {
		const board = createFakeBoard(rows());
		const feed = new BoardFeed(() => board);
		const statuses: (string | undefined)[] = [];
		const notices: string[] = [];
		const written: string[] = [];
		const presence = new BoardPresence(feed, resolveSettings({}, {}), (text) => written.push(text));
		presence.start({ setStatus: (_key, text) => statuses.push(text), notify: (text) => notices.push(text) });
		await feed.start();
		expect(statuses.at(-1)).toBe("board: 1 need input, 2 running");
		const lists = board.listCount;
		board.setState("w1", "completed", { alive: false, summary: "Done.", latestAssistant: "Done. All green." });
		await flushReports();
		expect(board.listCount).toBe(lists);
		expect(board.getCount).toBe(1);
		expect(statuses.at(-1)).toBe("board: 1 need input, 1 running");
		expect(notices).toEqual(["agent-board: streaming worker completed: Done. All green."]);
		expect(written[0]).toMatch(/^\x1b\]777;notify;pi agent board;streaming worker completed\x07$/);
		// Many rows reported at once (the engine's safety poll) cost one list, not N reads.
		board.bump();
		await flushReports();
		expect(board.listCount).toBe(lists + (rows().length > 32 ? 1 : 0));
		presence.stop();
		feed.stop();
	});

	it("OS notifications carry no control characters and can be turned off", () => {
		expect(osNotifySequence("x\x1b]0;pwned\x07", "a;b\nc", {})).toBe("\x1b]777;notify;x;a,b c\x07");
		expect(osNotifySequence("t", "b", { KITTY_WINDOW_ID: "1" })).toContain("\x1b]99;");
		expect(resolveSettings({}, { AGENT_BOARD_OS_NOTIFY: "off", AGENT_BOARD_STRIP: "0" })).toEqual({
			strip: false,
			notices: true,
			osNotify: false,
		});
		expect(resolveSettings({ notices: false }, {})).toEqual({ strip: true, notices: false, osNotify: true });
	});

	it("the strip lists live rows, needs-input first, within the width", () => {
		for (const width of WIDTHS) {
			const lines = stripLines(rows(), width, now, plainTheme);
			expect(lines[0]).toMatch(/^\? pick a database/);
			expect(lines.length).toBeLessThanOrEqual(3);
			for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
		}
		expect(stripLines([makeRow({ state: "completed" })], 80, now, plainTheme)).toEqual([]);
	});

	it("the transcript follows the session's current branch, not abandoned ones", () => {
		const entry = (id: string, parentId: string | null, role: string, text: string) =>
			JSON.stringify({
				type: "message",
				id,
				parentId,
				timestamp: new Date().toISOString(),
				message: { role, content: [{ type: "text", text }], timestamp: 0 },
			});
		const jsonl = [
			JSON.stringify({ type: "session", version: 3, id: "s", timestamp: new Date().toISOString(), cwd: "/tmp" }),
			entry("a", null, "user", "first question"),
			entry("b", "a", "assistant", "abandoned answer"),
			entry("c", "a", "assistant", "kept answer"),
			'{"type":"message","id":"d","par',
		].join("\n");
		const texts = parseTranscript(jsonl).map((e) => e.text);
		expect(texts).toEqual(["first question", "kept answer"]);
	});
});
