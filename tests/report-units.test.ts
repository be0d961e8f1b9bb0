/**
 * The morning report's building (pure): rows since a time by how they ended, a failure's why, every
 * answer given for the person (a rule's file:line, the model's note), the questions still waiting
 * whenever asked, spend per target, preset and day from the ledger (a row with no ledger line counts
 * its usage), each row's link; and the text `/agent-board report` prints. Also its arguments.
 */
import { describe, expect, it } from "vitest";
import { dayOf } from "../runner/life/spend-ledger.mjs";
import { parseReportArgs } from "../src/board/subcommands/report-args.ts";
import { buildReport, reportText } from "../src/board/view-model/report.ts";
import { makeRow } from "../test-support/fake-board-service.ts";

const NOW = Date.parse("2026-12-06T08:00:00");
const HOUR = 3_600_000;
const SINCE = NOW - 12 * HOUR;
const usage = (totalTokens: number, cost: number) => ({
	input: totalTokens,
	output: 0,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens,
	cost,
});

function world() {
	const done = makeRow({
		id: "r-done",
		name: "write the parser",
		state: "completed",
		summary: "Parser written.",
		lastActivityAt: NOW - HOUR,
		createdAt: NOW - 2 * HOUR,
		preset: "quick",
	});
	const failed = makeRow({
		id: "r-fail",
		name: "deploy",
		state: "failed",
		summary: "Failed: cannot start on box2: unreachable",
		error: "cannot start on box2: unreachable",
		target: "box2",
		lastActivityAt: NOW - 3 * HOUR,
		createdAt: NOW - 3 * HOUR,
		usage: usage(2000, 0.02),
	});
	const waiting = makeRow({
		id: "r-ask",
		name: "pick a db",
		state: "needs_input",
		question: "Which database?",
		supervisorNote: "asked you because: naming is your call",
		lastActivityAt: NOW - 20 * HOUR,
		createdAt: NOW - 20 * HOUR,
	});
	const old = makeRow({
		id: "r-old",
		state: "completed",
		lastActivityAt: NOW - 30 * HOUR,
		createdAt: NOW - 30 * HOUR,
		usage: usage(9999, 9),
	});
	const answered = makeRow({
		id: "r-rule",
		name: "refactor",
		state: "completed",
		summary: "Refactor finished.",
		lastActivityAt: NOW - 2 * HOUR,
		createdAt: NOW - 2 * HOUR,
	});
	return [done, failed, waiting, old, answered];
}

const decisions = [
	{
		at: NOW - 2 * HOUR,
		row: "r-rule",
		question: "Should I continue?",
		rule: "/home/u/.pi/agent/agent-board/rules.md:4",
		ruleText: 'when question says "continue": answer "yes"',
		decision: "answered",
		answer: "yes",
	},
	{
		at: NOW - HOUR,
		row: "r-done",
		question: "Tabs or spaces?",
		rule: "model",
		decision: "answered",
		answer: "tabs",
		model: "faux/faux-1",
	},
	{
		at: NOW - HOUR,
		row: "r-ask",
		question: "Which database?",
		rule: "model",
		decision: "asked-you",
		note: "asked you because: naming is your call",
	},
	{ at: NOW - 20 * HOUR, row: "r-old", question: "old?", rule: "model", decision: "answered", answer: "old" },
];

const spend = [
	{ at: NOW - HOUR, row: "r-done", run: "a", tokens: 1000, cost: 0.01 },
	{ at: NOW - 30 * HOUR, row: "r-done", run: "a", tokens: 5000, cost: 5 },
];

describe("the morning report", () => {
	it("sorts what ran since by how it ended, with the failure's why and each row's link", () => {
		const report = buildReport({
			since: SINCE,
			now: NOW,
			rows: world(),
			decisions,
			spend,
			rowUrl: (id) => `http://h/?row=${id}`,
		});
		expect(report.ran).toBe(3);
		expect(report.finished.map((r) => r.id)).toEqual(["r-done", "r-rule"]);
		expect(report.failed).toMatchObject([
			{ id: "r-fail", text: "cannot start on box2: unreachable", target: "box2", url: "http://h/?row=r-fail" },
		]);
		// A question asked before the window still waits: it is in the report.
		expect(report.waiting).toMatchObject([
			{ id: "r-ask", text: "Which database?", note: "asked you because: naming is your call" },
		]);
	});

	it("lists every answer given for the person: by rule with its file:line, by the model with its note", () => {
		const report = buildReport({ since: SINCE, now: NOW, rows: world(), decisions, spend });
		expect(report.answers.map((a) => [a.row, a.by, a.rule, a.answer, a.note])).toEqual([
			["r-done", "model", "model", "tabs", "by faux/faux-1"],
			["r-rule", "rule", "/home/u/.pi/agent/agent-board/rules.md:4", "yes", undefined],
		]);
		const text = reportText(report);
		expect(text).toContain(
			'r-rule refactor: "Should I continue?" -> "yes" by rule /home/u/.pi/agent/agent-board/rules.md:4 (when question says "continue": answer "yes")',
		);
		expect(text).toContain('r-done write the parser: "Tabs or spaces?" -> "tabs" by the model (by faux/faux-1)');
		expect(text).not.toContain("old?");
	});

	it("sums the spend per target, preset and day from the ledger, and a row without ledger lines by its usage", () => {
		const report = buildReport({ since: SINCE, now: NOW, rows: world(), decisions, spend });
		expect(report.spend.target).toEqual([
			{ key: "box2", tokens: 2000, cost: 0.02 },
			{ key: "local", tokens: 1000, cost: 0.01 },
		]);
		expect(report.spend.preset).toEqual([
			{ key: "(no preset)", tokens: 2000, cost: 0.02 },
			{ key: "quick", tokens: 1000, cost: 0.01 },
		]);
		expect(report.spend.day.map((d) => d.key)).toEqual(
			[...new Set([dayOf(NOW - 3 * HOUR), dayOf(NOW - HOUR)])].sort(),
		);
		expect(report.spend.rowsWithoutLedger).toBe(1);
	});

	it("prints its headline and sections, worker text made plain", () => {
		const rows = world();
		rows[0] = { ...rows[0]!, summary: "Parser \u001b[31mwritten\u001b[0m." };
		const text = reportText(buildReport({ since: SINCE, now: NOW, rows, decisions, spend }));
		expect(text.split("\n")[0]).toMatch(
			/^3 rows ran since 2026-12-05 20:00: 2 finished, 1 failed, 1 waiting for you, 2 answers given for you$/,
		);
		expect(text).toContain(
			"Waiting for you\n  ? r-ask pick a db: Which database? (asked you because: naming is your call)",
		);
		expect(text).toContain("Failed\n  x r-fail deploy: cannot start on box2: unreachable");
		expect(text).toContain("Spend per target\n  box2: 2.0k tok $0.02\n  local: 1.0k tok $0.01");
		expect(text).not.toContain("\u001b");
	});

	it("takes --since, 12h by default, and refuses what is no time", () => {
		expect(parseReportArgs("")).toEqual({ ok: true, since: "12h" });
		expect(parseReportArgs("--since 2d")).toEqual({ ok: true, since: "2d" });
		expect(parseReportArgs("--since soon")).toMatchObject({
			ok: false,
			error: expect.stringContaining("not a time: soon"),
		});
		expect(parseReportArgs("yesterday")).toMatchObject({ ok: false });
	});
});
