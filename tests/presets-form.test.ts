/**
 * The new-agent form's first option picks a preset: the form shows what it sets (where, model,
 * thinking, worktree, attempts), the dispatch carries the preset with those choices, and the remembered
 * choices stay untouched for the next form without a preset. Rendered as a component at a width.
 */
import { visibleWidth } from "@earendil-works/pi-tui";
import { describe, expect, it } from "vitest";
import { DispatchOptionsView } from "../src/board/dashboard/dispatch-options.ts";
import type { PresetSummary } from "../src/board/engine/types.ts";
import { harnessPerTest } from "../test-support/dashboard-harness.ts";
import { flushReports, KEY, makeRow } from "../test-support/fake-board-service.ts";

const harness = harnessPerTest();
const CTRL_O = "\x0f";
/** The screen as one line: the summary wraps at the width. */
const flat = (text: string): string => text.replace(/\s+/g, " ");

const PRESETS: PresetSummary[] = [
	{
		name: "reviewer",
		description: "reviews diffs",
		source: "user",
		model: "faux/faux-2",
		thinking: "high",
		target: "dev",
		worktreeMode: "worktree",
		attempts: 2,
		ponytailMode: "ultra",
		budget: { tokens: 50_000 },
	},
	{ name: "scout", description: "looks around", source: "project", model: "faux/faux-1" },
];

describe("presets in the new-agent form", () => {
	it("the first option picks a preset, the form shows its choices, and the dispatch carries them; the remembered choices stay", async () => {
		const h = await harness([makeRow({ id: "c1", name: "done", state: "completed" })], {
			targetNames: () => ["dev"],
			prefs: { cwd: "/tmp/proj", model: "faux/faux-1", worktreeMode: "none" },
		});
		Object.assign(h.board, { presets: (cwd: string) => (cwd === "/tmp/proj" ? PRESETS : []) });
		await h.press("n", "\x1b[200~review the parser change\x1b[201~", CTRL_O);
		expect(h.top()).toBeInstanceOf(DispatchOptionsView);
		const first = h
			.screen()
			.split("\n")
			.find((line) => line.includes("preset"));
		expect(first).toMatch(/^\s*→?\s*preset\s+none/);
		// enter cycles the first option: none -> reviewer.
		await h.press(KEY.enter);
		const screen = h.screen();
		expect(screen).toMatch(/preset\s+reviewer/);
		expect(screen).toMatch(/where\s+dev/);
		expect(screen).toMatch(/model\s+faux\/faux-2/);
		expect(screen).toMatch(/thinking\s+high/);
		expect(screen).toMatch(/attempts\s+2/);
		expect(flat(screen)).toContain(
			"preset reviewer · in /tmp/proj · on dev · faux/faux-2 · thinking high · each in its own worktree · 2 attempts",
		);
		for (const width of [60, 80, 120])
			for (const line of h.dash.render(width)) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
		await h.press("s");
		await flushReports();
		const dispatched = h.board.calls.filter((c) => c.method === "dispatch").map((c) => c.args[0]);
		expect(dispatched[0]).toEqual({
			prompt: "review the parser change",
			cwd: "/tmp/proj",
			preset: "reviewer",
			model: "faux/faux-2",
			thinking: "high",
			worktreeMode: "worktree",
			target: "dev",
		});
		expect(dispatched).toHaveLength(2);
		// A dispatch with a preset leaves the remembered choices alone.
		expect(h.saved).toEqual([]);
		await h.press("n");
		expect(flat(h.screen())).toContain("in /tmp/proj · local · faux/faux-1 · no worktree · 1 attempt");
	});

	it("picking none again puts back the remembered choices", async () => {
		const h = await harness([], {
			targetNames: () => ["dev"],
			prefs: { cwd: "/tmp/proj", model: "faux/faux-1", worktreeMode: "auto" },
		});
		Object.assign(h.board, { presets: () => PRESETS });
		await h.press("n", "x", CTRL_O, KEY.enter);
		expect(h.screen()).toMatch(/where\s+dev/);
		// reviewer -> scout -> none
		await h.press(KEY.enter, KEY.enter);
		expect(h.screen()).toMatch(/preset\s+none/);
		expect(flat(h.screen())).toContain(
			"in /tmp/proj · local · faux/faux-1 · own worktree if the repo is busy · 1 attempt",
		);
	});

	it("the list and the peek show spend against budget and why the supervisor asked, within the width", async () => {
		const paused = makeRow({
			id: "b1",
			name: "budgeted",
			state: "needs_input",
			alive: true,
			question: "budget reached: 2k tokens; raise or stop",
			questionOptions: ["raise to 4k", "stop"],
			budget: { scope: "row", unit: "tokens", limit: 2000, spent: 2150, paused: true },
		});
		const asked = makeRow({
			id: "q1",
			name: "asking",
			state: "needs_input",
			alive: true,
			question: "What should the module be called?",
			supervisorNote: "asked you because: naming is your call",
		});
		const day = makeRow({
			id: "d1",
			name: "daily",
			state: "working",
			alive: true,
			budget: { scope: "day", unit: "tokens", limit: 50_000, spent: 40_000 },
		});
		const h = await harness([paused, asked, day]);
		expect(h.screen()).toContain("2.1k/2k tok");
		expect(h.screen()).toContain("day 40k/50k tok");
		await h.press(KEY.enter);
		const peek = h.screen();
		expect(peek).toMatch(/budget\s+2\.1k of 2k tokens \(this row\) · paused: reply with a new amount/);
		expect(peek).toContain("1. raise to 4k");
		for (const width of [40, 80, 120])
			for (const line of h.dash.render(width)) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
		await h.press(KEY.esc, KEY.down, KEY.enter);
		expect(h.screen()).toContain("asked you because: naming is your call");
	});

	it("a board without presets shows no preset option", async () => {
		const h = await harness([], {});
		await h.press("n", "x", CTRL_O);
		expect(h.screen()).not.toMatch(/^\s*→?\s*preset/m);
	});
});
