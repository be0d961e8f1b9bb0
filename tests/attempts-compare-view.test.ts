/** Compare view component rendered at 80 and 120 columns, driven by keys (pi's keybindings). */
import { KeybindingsManager, TUI_KEYBINDINGS, visibleWidth } from "@earendil-works/pi-tui";
import { describe, expect, it } from "vitest";
import type { AttemptSetView, BoardRow } from "../src/board/types.ts";
import { CompareView } from "../src/board/dashboard/compare-view.ts";
import { makeRow } from "../test-support/fake-board-service.ts";

const KEY = { up: "\x1b[A", down: "\x1b[B", esc: "\x1b", space: " " };
const plainTheme = { fg: (_color: string, text: string) => text, bold: (text: string) => text };

function attempt(index: number, patch: Partial<BoardRow>): BoardRow {
	return makeRow({ id: `r${index}`, attempt: { setId: "set-1", index, count: 3 }, worktreeMode: "worktree", repo: "/repo", ...patch });
}

function fixture(): AttemptSetView {
	const one = attempt(1, { name: "Fix the login bug [1/3]", diff: { added: 3, removed: 1, files: 2 }, summary: "Rewrote the session check." });
	const two = attempt(2, { name: "Fix the login bug [2/3] \x1b[31mred\x1b[0m\x07", diff: { added: 5, removed: 0, files: 1 }, state: "working", alive: true });
	const three = attempt(3, { name: "Fix the login bug [3/3]", merged: { at: 1, commit: "c".repeat(40), into: "main" } });
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

function harness() {
	const calls: string[] = [];
	const view = new CompareView({
		theme: plainTheme,
		keys: new KeybindingsManager(TUI_KEYBINDINGS),
		onDiff: (a, b) => calls.push(`diff ${a.id} ${b.id}`),
		onMerge: (row) => calls.push(`merge ${row.id}`),
		onClose: () => calls.push("close"),
		setStatus: (text) => calls.push(`status ${text}`),
	});
	view.setData(fixture());
	return { view, calls, press: (...keys: string[]) => keys.forEach((key) => view.handleInput(key)) };
}

describe("compare view", () => {
	for (const width of [80, 120]) {
		it(`renders an attempt set within ${width} columns`, () => {
			const { view } = harness();
			const lines = view.render(width);
			for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
			const screen = lines.join("\n");
			expect(lines[0]).toMatch(/^Attempt set set-1 3 attempts · 1 merged · 2 overlapping · \/repo/);
			expect(lines[1]).toMatch(/^> #1 {2}\+ completed {2}\+3 -1 2f {2}!overlap {2}r1 {2}Fix the login bug \[1\/3\]/);
			expect(screen).toContain("     files: login.ts, session.ts");
			expect(screen).toContain("     overlap: login.ts (with r2)");
			expect(screen).toContain("     Rewrote the session check.");
			expect(screen).toMatch(/ {2}#2 {2}> working {2}\+5 -0 1f {2}!overlap {2}r2 {2}Fix the login bug \[2\/3\] {1,2}red/);
			expect(screen).toMatch(/ {2}#3 {2}merged → main {2}1f {2}r3/);
			// Worker text never carries escape or control sequences to the terminal.
			expect(screen).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
		});
	}

	it("marks, diffs, merges and closes through its callbacks", () => {
		const { view, calls, press } = harness();
		press("d");
		expect(calls).toEqual(["status mark one attempt, select another, then diff"]);
		press(KEY.space, KEY.down, "d");
		expect(calls.at(-1)).toBe("diff r1 r2");
		expect(view.render(80)[1]).toMatch(/^ \*#1/);
		press("m");
		expect(calls.at(-1)).toBe("merge r2");
		press(KEY.down, "m");
		expect(calls.at(-1)).toBe("status r3 is already merged into main");
		press(KEY.esc);
		expect(calls.at(-1)).toBe("close");
	});
});
