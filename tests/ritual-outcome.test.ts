import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listNotes, newNotes } from "../src/ritual/notes.ts";
import { judgeRitual, messagesFrom, taskCompleted } from "../src/ritual/outcome.ts";
import { failureLine, printable } from "../src/ritual/report.ts";

const user = { role: "user" };
const answer = (stopReason: string, errorMessage?: string) => ({ role: "assistant", stopReason, errorMessage });

describe("taskCompleted mirrors print mode's exit 0", () => {
	it("is true only when the last message is an assistant answer that did not fail or get cut off", () => {
		expect(taskCompleted([user, answer("stop")])).toBe(true);
		expect(taskCompleted([user, answer("toolUse")])).toBe(true);
		expect(taskCompleted([user, answer("error", "boom")])).toBe(false);
		expect(taskCompleted([user, answer("aborted")])).toBe(false);
		expect(taskCompleted([user, answer("length")])).toBe(false);
		expect(taskCompleted([answer("stop"), user])).toBe(false);
		expect(taskCompleted([answer("stop"), { role: "custom", customType: "x" }])).toBe(false);
		expect(taskCompleted([])).toBe(false);
	});
});

describe("judgeRitual", () => {
	const prompt = { role: "custom", customType: "ritual" };
	it("takes the ritual's turn from its prompt on", () => {
		expect(messagesFrom([user, answer("stop"), prompt, answer("stop")], "ritual")).toEqual([prompt, answer("stop")]);
		expect(messagesFrom([user, answer("stop")], "ritual")).toEqual([]);
	});

	it("succeeds when the turn answered and a new note appeared", () => {
		expect(judgeRitual([prompt, answer("toolUse"), { role: "toolResult" }, answer("stop")], ["n.md"])).toEqual({
			ok: true,
			notes: ["n.md"],
		});
	});

	it("names the reason otherwise", () => {
		expect(judgeRitual([prompt, answer("error", "provider down")], [])).toEqual({
			ok: false,
			reason: "provider down",
		});
		expect(judgeRitual([prompt, answer("error")], [])).toEqual({ ok: false, reason: "the model request failed" });
		expect(judgeRitual([prompt, answer("aborted")], ["n.md"])).toEqual({
			ok: false,
			reason: "the model request was aborted",
		});
		expect(judgeRitual([prompt, answer("stop")], [])).toEqual({
			ok: false,
			reason: "no new note appeared in .tasks/handoffs/",
		});
		expect(judgeRitual([], ["n.md"])).toEqual({ ok: false, reason: "the ritual turn did not run (no model reply)" });
	});
});

describe("notes", () => {
	let dir: string | undefined;
	afterEach(() => {
		if (dir) rmSync(dir, { recursive: true, force: true });
		dir = undefined;
	});

	it("lists markdown notes, tolerates a missing directory and finds the new ones", () => {
		dir = mkdtempSync(join(tmpdir(), "pab-ritual-notes-"));
		expect(listNotes(dir)).toEqual([]);
		mkdirSync(join(dir, ".tasks/handoffs"), { recursive: true });
		writeFileSync(join(dir, ".tasks/handoffs/2026-01-01-0000-old.md"), "");
		writeFileSync(join(dir, ".tasks/handoffs/.note.md.tmp"), "");
		const before = listNotes(dir);
		expect(before).toEqual(["2026-01-01-0000-old.md"]);
		writeFileSync(join(dir, ".tasks/handoffs/2026-01-02-0000-new.md"), "");
		expect(newNotes(before, listNotes(dir))).toEqual(["2026-01-02-0000-new.md"]);
	});
});

describe("failure line", () => {
	it("strips control characters (C0, DEL, C1) so no escape sequence reaches the terminal", () => {
		expect(printable("a\u001b[2Jb\r\nc\u007fd\u009be")).toBe("a [2Jb c d e");
		const line = failureLine("x\u001b]0;title\u0007y");
		expect(line).toBe("session-handoff ritual failed (the task's answer stands): x ]0;title y");
		expect(/[\u0000-\u001f\u007f-\u009f]/.test(line)).toBe(false);
	});

	it("caps a long reason and never leaves it empty", () => {
		expect(failureLine("z".repeat(1000)).length).toBeLessThan(400);
		expect(failureLine("\u001b")).toMatch(/unknown reason$/);
	});
});
