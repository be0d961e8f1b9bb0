/**
 * Hostile model text in the dashboard, in real pi under tmux: the terminal (tmux) must see none of its
 * escape sequences. If any got through, tmux would act on it: OSC 0 renames the pane, OSC 52 (with
 * set-clipboard on) creates a paste buffer, ESC[2J clears the board off the screen.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { waitDone } from "../test-support/board-helpers.ts";
import { boardOf, openBoard, useBoardTmux } from "../test-support/tmux-board.ts";

const tb = useBoardTmux();

const HOSTILE =
	"Clipboard \x1b]52;c;cm0gLXJmIH4=\x07 title \x1b]0;pwned\x1b\\ clear \x1b[2J\x1b[H link \x1b]8;;https://evil.example\x1b\\here\x1b]8;;\x1b\\ done.";

describe("hostile model text in the dashboard", () => {
	it("reaches the screen as plain text in the list, peek and transcript; tmux sees no title, clipboard or clear", async (ctx) => {
		const a = tb.agent({ script: { rules: [], fallback: [{ text: HOSTILE }] } });
		const service = boardOf(a);
		const row = await service.dispatch({ prompt: "say something hostile", cwd: a.cwd });
		const done = await waitDone(service, row.id);
		// The raw store and session really hold the sequences: the test fails if the model text were not hostile.
		expect(readFileSync(join(done.runDir ?? "", "status.json"), "utf8")).toContain("\\u001b]52;c;");
		expect(readFileSync(done.sessionFile, "utf8")).toContain("\\u001b]0;pwned");

		const t = await tb.start(ctx, a, { width: 160, height: 40 });
		const tm = (...args: string[]) =>
			execFileSync("tmux", ["-L", t.socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
		tm("set-option", "-s", "set-clipboard", "on");
		await openBoard(t);
		const list = await t.waitForText(/Completed \(1\)[\s\S]*Clipboard\s+title\s+clear\s+link here done\./);
		expect(list).toContain("Agent board");
		t.keys("Enter");
		const peek = await t.waitForText(/Latest answer:[\s\S]*Clipboard/);
		expect(peek).toContain("Agent board");
		t.keys("t");
		const transcript = await t.waitForText(/Transcript: say something hostile[\s\S]*Clipboard/);
		// The board's own header is still on screen: nothing cleared it.
		expect(transcript).toContain("Agent board");
		for (const screen of [list, peek, transcript]) expect(screen).not.toContain("cm0gLXJmIH4=");
		expect(tm("display-message", "-p", "-t", "main", "#{pane_title}")).not.toContain("pwned");
		expect(tm("list-buffers").trim()).toBe("");
	});
});
