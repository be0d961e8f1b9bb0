/**
 * The supervisor's pure parts: the fixed classifier, the rules files' grammar and matching, the decision
 * the rules make (never-auto classes first, whatever a rule says), and the model's reply parsing.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { neverClass, questionNeverClass, routineClass } from "../runner/supervisor/classify.mjs";
import { answerRefused, decide } from "../runner/supervisor/decide.mjs";
import { MAX_RULES_BYTES, readRules, rulesText } from "../runner/supervisor/rules-files.mjs";
import { firstMatch, joinRules, parseRules } from "../runner/supervisor/rules.mjs";
import { parseDecision, REQUEST_MARKER, requestText } from "../runner/supervisor/supervisor-model.mjs";

const RULES = `# How my agents are answered

We use pnpm and vitest. Prefer small changes.

## Rules
- when question says "continue" or "proceed": answer "yes"
- when class is choice and question says "test runner": answer "vitest"
- when question matches /which (db|database)/i: choose 2
- when target is prod-box: ask me
- when preset is reviewer: decide
- when row is "nightly build": choose "skip"

## Notes
Plain words again.
`;

describe("the fixed classifier", () => {
	const never: Array<[string, string]> = [
		["delete the production database?", "delete"],
		["Should I drop the users table?", "delete"],
		["rm -rf build/ before the next step?", "delete"],
		["Can I remove the old backups?", "delete"],
		["force-push the rebased branch?", "force-push"],
		["OK to git push --force to main?", "force-push"],
		["Deploy to staging now?", "deploy"],
		["publish the package to npm?", "deploy"],
		["Buy the pro plan for the CI?", "spend"],
		["this costs $20 a month, ok?", "spend"],
		["Put the API key in the config?", "credentials"],
		["commit the .env file?", "credentials"],
		["install it globally with sudo?", "outside-workspace"],
		["edit ~/.bashrc to add the path?", "outside-workspace"],
		["write to ../other-project/config?", "outside-workspace"],
	];
	it.each(never)("%s -> %s", (question, name) => {
		expect(neverClass(question)?.name).toBe(name);
	});

	it("leaves routine questions alone and tells their class", () => {
		for (const question of [
			"Should I continue with the refactor?",
			"Which test runner should I use?",
			"Add a unit test for the parser too?",
			"Use tabs or spaces?",
			"Rename removeItem to dropItem in the API docs?",
		]) {
			expect(neverClass(question), question).toBeUndefined();
		}
		expect(routineClass({ question: "Should I continue?" })).toBe("confirm");
		expect(routineClass({ question: "Pick one", options: ["vitest", "jest"] })).toBe("choice");
		expect(routineClass({ question: "Proceed?", options: ["yes", "no"] })).toBe("confirm");
		expect(routineClass({ question: "What should the new module be called?" })).toBe("choice");
		expect(routineClass({ question: "Describe the API you want." })).toBe("open");
	});

	it("reads the options too: an option that deletes makes the question one that deletes", () => {
		expect(
			questionNeverClass({ question: "How should I clean up?", options: ["keep everything", "delete the old data"] })
				?.name,
		).toBe("delete");
	});
});

describe("rules files", () => {
	const set = parseRules(RULES, "rules.md");

	it("reads the list under Rules and keeps everything else as plain words", () => {
		expect(set.errors).toEqual([]);
		expect(set.rules.map((rule) => rule.label)).toEqual([
			"rules.md:6",
			"rules.md:7",
			"rules.md:8",
			"rules.md:9",
			"rules.md:10",
			"rules.md:11",
		]);
		expect(set.words).toContain("We use pnpm and vitest.");
		expect(set.words).toContain("Plain words again.");
		expect(set.words).not.toContain('"yes"');
	});

	it("matches in order, on the question, class, row, target and preset", () => {
		const row = { rowId: "mx1-abc", rowName: "task", target: undefined, preset: undefined };
		expect(firstMatch(set.rules, { question: "Should I continue?" }, row)?.label).toBe("rules.md:6");
		expect(firstMatch(set.rules, { question: "Which test runner?" }, row)?.label).toBe("rules.md:7");
		expect(
			firstMatch(set.rules, { question: "Which DB for the cache?", options: ["sqlite", "postgres"] }, row)?.label,
		).toBe("rules.md:8");
		expect(firstMatch(set.rules, { question: "Rename it?" }, { ...row, target: "prod-box" })?.label).toBe(
			"rules.md:9",
		);
		// A pool's row: `target is` names the pool or the member it runs on.
		expect(
			firstMatch(set.rules, { question: "Rename it?" }, { ...row, target: "build", member: "prod-box" })?.label,
		).toBe("rules.md:9");
		expect(firstMatch(set.rules, { question: "Rename it?" }, { ...row, target: "build" })?.label).not.toBe(
			"rules.md:9",
		);
		expect(firstMatch(set.rules, { question: "Rename it?" }, { ...row, preset: "reviewer" })?.label).toBe(
			"rules.md:10",
		);
		expect(
			firstMatch(
				set.rules,
				{ question: "Rename it?", options: ["do it", "skip"] },
				{ ...row, rowName: "nightly build" },
			)?.label,
		).toBe("rules.md:11");
		expect(firstMatch(set.rules, { question: "Rename it?" }, row)).toBeUndefined();
	});

	it("names the file and line of a rule it cannot read, and keeps a colon inside quotes", () => {
		const bad = parseRules(
			'## Rules\n- when question says "a: b": answer "x: y"\n- whenever: yes\n- when class is sometimes: ask me\n- when question matches /[/: decide\n- always: frobnicate\nloose text\n',
			"r.md",
		);
		expect(bad.rules.map((rule) => rule.action)).toEqual([{ kind: "answer", text: "x: y" }]);
		expect(bad.errors).toEqual([
			expect.stringMatching(/^r\.md:3: a rule starts with "when"/),
			expect.stringMatching(/^r\.md:4: unknown class "sometimes"/),
			expect.stringMatching(/^r\.md:5: /),
			expect.stringMatching(/^r\.md:6: cannot read the action "frobnicate"/),
			expect.stringMatching(/^r\.md:7: under "Rules" each line is one rule/),
		]);
	});

	it("joins files most specific first", () => {
		const project = parseRules('## Rules\n- when question says "continue": answer "no"\n', "project.md");
		const joined = joinRules([project, set]);
		expect(firstMatch(joined.rules, { question: "continue?" }, {})?.label).toBe("project.md:2");
	});
});

describe("the decision", () => {
	const set = parseRules(RULES, "rules.md");
	const row = { rowId: "r1", rowName: "task" };

	it("answers from a rule and names it", () => {
		expect(decide({ question: "Should I continue?" }, set, row)).toEqual({
			kind: "answer",
			text: "yes",
			rule: "rules.md:6",
			ruleText: 'when question says "continue" or "proceed": answer "yes"',
		});
		expect(decide({ question: "Which database?", options: ["sqlite", "postgres"] }, set, row)).toMatchObject({
			kind: "answer",
			text: "postgres",
			rule: "rules.md:8",
		});
	});

	it("leaves what no rule covers to the model, and a rule's 'ask me' to the user", () => {
		expect(decide({ question: "Rename it?" }, set, row)).toEqual({ kind: "model", rule: "model" });
		expect(decide({ question: "Rename it?" }, set, { ...row, preset: "reviewer" })).toMatchObject({
			kind: "model",
			rule: "rules.md:10",
		});
		expect(decide({ question: "Rename it?" }, set, { ...row, target: "prod-box" })).toMatchObject({
			kind: "escalate",
			note: "asked you because: rules.md:9 says ask me",
		});
	});

	it("never answers a question that deletes, even when a rule says yes to everything", () => {
		const yes = parseRules('## Rules\n- always: answer "yes"\n', "yes.md");
		expect(decide({ question: "Continue?" }, yes, row)).toMatchObject({ kind: "answer", text: "yes" });
		expect(decide({ question: "delete the production database?" }, yes, row)).toEqual({
			kind: "escalate",
			note: "asked you because: it proposes to delete something, which is not in the safe set (never answered for you)",
			rule: "never: not in the safe set",
		});
	});

	it("sends every question to the user while the rules do not read", () => {
		const broken = joinRules([parseRules('## Rules\n- when: answer "x"\n', "b.md"), set]);
		expect(decide({ question: "Should I continue?" }, broken, row)).toMatchObject({
			kind: "escalate",
			rule: "rules error",
		});
	});

	it("a choice the question does not offer goes to the user", () => {
		expect(decide({ question: "Which db?", options: ["only one"] }, set, row)).toMatchObject({
			kind: "escalate",
			note: expect.stringContaining("chooses option 2"),
		});
	});

	it("checks the model's answer with the classifier too", () => {
		expect(answerRefused("yes, and drop the table afterwards")).toBe(
			"asked you because: the supervisor's answer may delete something (never answered for you)",
		);
		expect(answerRefused("use vitest")).toBeUndefined();
	});
});

describe("the supervisor model's request and reply", () => {
	it("puts everything below the marker, the question last", () => {
		const text = requestText({
			ask: { question: "Which runner?", options: ["vitest", "jest"] },
			words: "We use vitest.",
			row: { id: "r1", name: "tests", goal: "add tests" },
			transcript: ["- 3s ago: tool ask_user: Which runner?"],
			others: [{ name: "docs", summary: "" }],
		});
		expect(text.startsWith(REQUEST_MARKER)).toBe(true);
		expect(text).toContain("We use vitest.");
		expect(text).toContain("- docs\n");
		expect(text.trimEnd().endsWith("1. vitest\n2. jest")).toBe(true);
	});

	it("reads the last JSON line; anything else is no decision", () => {
		expect(parseDecision('thinking...\n{"decision":"answer","answer":"vitest"}')).toEqual({
			kind: "answer",
			text: "vitest",
		});
		expect(parseDecision('```json\n{"decision":"ask","why":"it is about taste"}\n```')).toEqual({
			kind: "ask",
			why: "it is about taste",
		});
		expect(parseDecision("sure, vitest")).toEqual({ kind: "invalid" });
		expect(parseDecision('{"decision":"answer","answer":""}')).toEqual({ kind: "invalid" });
	});
});

describe("rules that read or nothing", () => {
	it("refuses a file that is not UTF-8 text or is too large, naming its path, and every question goes to the person", () => {
		const dir = mkdtempSync(join(tmpdir(), "rules-bytes-"));
		try {
			const cases: Array<[string, Buffer, RegExp]> = [
				[
					"nul.md",
					Buffer.from('## Rules\n- always: answer "yes"\n\0\0'),
					/nul\.md: not text: a NUL byte at byte 32$/,
				],
				["latin1.md", Buffer.from([0x23, 0x20, 0xe9, 0x74, 0xe9, 0x0a]), /latin1\.md: not UTF-8 text$/],
				["big.md", Buffer.alloc(MAX_RULES_BYTES + 1, 0x61), /big\.md: larger than 65536 bytes$/],
			];
			for (const [name, bytes, error] of cases) {
				const path = join(dir, name);
				writeFileSync(path, bytes);
				const rules = readRules([path]);
				expect(rules.errors, name).toEqual([expect.stringMatching(error)]);
				expect(rules.errors[0]).toContain(dir);
				expect(decide({ question: "Should I continue?" }, rules, {})).toMatchObject({
					kind: "escalate",
					rule: "rules error",
					note: expect.stringContaining(`asked you because: the rules do not read: ${path}`),
				});
			}
			expect(rulesText(Buffer.from("## Rules\n- always: ask me\n", "utf8"))).toBe("## Rules\n- always: ask me\n");
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});
