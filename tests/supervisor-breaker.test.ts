/**
 * The breaker: a row whose questions came to the person three times in a row is not answered for until
 * the person answers one. The runner's Supervisor, on a store of its own (no process: the path it takes
 * writes the note and the log line, and no model is asked).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { updatePolicy } from "../runner/life/policy.mjs";
import { breakerNote, escalatedInARow } from "../runner/supervisor/breaker.mjs";
import { Supervisor } from "../runner/supervisor/supervisor.mjs";
import { appendSupervisorLine, readSupervisorLog } from "../runner/supervisor/supervisor-log.mjs";
import type { RunStatus } from "../src/board/engine/types.ts";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

const line = (row: string, decision: "asked-you" | "answered" | "you-answered", at: number) => ({
	at,
	row,
	run: "run-1",
	call: `call-${at}`,
	question: "q?",
	rule: "rules.md:2",
	decision,
	ms: 1,
});

describe("the breaker", () => {
	it("counts a row's questions left to the person back to the last one answered, other rows aside", () => {
		const lines = [
			line("a", "answered", 1),
			line("a", "asked-you", 2),
			line("b", "answered", 3),
			line("a", "asked-you", 4),
			line("a", "asked-you", 5),
		];
		expect(escalatedInARow(lines, "a")).toBe(3);
		expect(escalatedInARow(lines, "b")).toBe(0);
		expect(breakerNote(lines, "a")).toBe(
			"asked you because: this row's last 3 questions came to you; nothing is answered for it until you answer one",
		);
		expect(breakerNote(lines, "a", 4)).toBeUndefined();
		expect(breakerNote([...lines, line("a", "you-answered", 6)], "a")).toBeUndefined();
	});

	it("stops a rule's answer after three escalations in a row, says so on the row and in the log, and closes when the person answers", async () => {
		const storeDir = mkdtempSync(join(tmpdir(), "breaker-"));
		dirs.push(storeDir);
		const rules = join(storeDir, "rules.md");
		writeFileSync(rules, '## Rules\n- always: answer "yes"\n');
		await updatePolicy(storeDir, (policy) => (policy.supervisor = { model: "faux/faux-1" }));
		mkdirSync(join(storeDir, "live"), { recursive: true });
		for (const at of [1, 2, 3]) appendSupervisorLine(storeDir, line("row-1", "asked-you", Date.now() - 1000 + at));
		const status = { recentEvents: [] } as unknown as RunStatus;
		const notes: string[] = [];
		const supervisor = new Supervisor(
			{
				rowId: "row-1",
				runId: "run-2",
				runDir: join(storeDir, "run"),
				storeDir,
				prompt: "task",
				piCommand: ["pi"],
				supervise: { rules: [rules] },
			} as never,
			status,
			{ changed: () => undefined, note: (text) => notes.push(text), over: () => false },
			{},
		);
		supervisor.onEvent({
			type: "tool_execution_start",
			toolName: "ask_user",
			toolCallId: "call-9",
			args: { question: "Should I continue?" },
		});
		await expect
			.poll(() => status.supervisor?.note, { timeout: 10_000 })
			.toBe(
				"asked you because: this row's last 3 questions came to you; nothing is answered for it until you answer one",
			);
		expect(readSupervisorLog(storeDir).at(-1)).toMatchObject({
			rule: "breaker",
			decision: "asked-you",
			call: "call-9",
		});
		expect(notes.at(-1)).toContain("(breaker)");
		// The person answers it: the breaker closes for the next question.
		supervisor.onEvent({
			type: "tool_execution_end",
			toolName: "ask_user",
			toolCallId: "call-9",
			result: { content: [{ type: "text", text: "The user answered: yes" }], details: { answered: true } },
		});
		expect(readSupervisorLog(storeDir).at(-1)).toMatchObject({ decision: "you-answered", call: "call-9" });
		expect(breakerNote(readSupervisorLog(storeDir), "row-1")).toBeUndefined();
		supervisor.close();
	});
});
