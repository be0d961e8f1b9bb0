/**
 * Presets in pi's agents/*.md format, project trust for presets and rules, what a preset fills in a
 * dispatch and in the new-agent form, and the parsing of the new subcommands.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { initialChoices } from "../src/board/view-model/dispatch-choices.ts";
import { applyPreset } from "../src/board/engine/policy/apply-preset.ts";
import { presetChoices } from "../src/board/view-model/preset-choices.ts";
import { findPreset, loadPresets, parsePreset } from "../src/board/engine/policy/presets.ts";
import { parseSubcommand } from "../src/board/subcommands/subcommands.ts";
import { rulesPaths, userRulesPath } from "../src/board/engine/policy/rules-paths.ts";
import { parseSince } from "../runner/time-words.mjs";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

function layout() {
	const root = realpathSync(mkdtempSync(join(tmpdir(), "pab-presets-")));
	dirs.push(root);
	const agentDir = join(root, "agent");
	const project = join(root, "project");
	mkdirSync(join(agentDir, "agents"), { recursive: true });
	mkdirSync(join(project, ".pi", "agents"), { recursive: true });
	mkdirSync(join(project, ".pi", "agent-board"), { recursive: true });
	mkdirSync(join(project, "src"), { recursive: true });
	return { root, agentDir, project };
}

const REVIEWER = `---
name: reviewer
description: Reviews diffs, read-only
model: faux/faux-2
thinking: high
ponytail: ultra
target: dev
worktree: true
attempts: 2
budget: 50k
rules: ./reviewer-rules.md
tools: read, grep
---

You review. Never edit files.
`;

describe("preset files", () => {
	it("reads pi's agent fields and ours; the body is the extra system text", () => {
		const preset = parsePreset(REVIEWER, "/x/agents/reviewer.md", "user");
		expect(preset).toEqual({
			name: "reviewer",
			description: "Reviews diffs, read-only",
			source: "user",
			filePath: "/x/agents/reviewer.md",
			model: "faux/faux-2",
			thinking: "high",
			ponytailMode: "ultra",
			target: "dev",
			worktreeMode: "worktree",
			attempts: 2,
			budget: { tokens: 50_000 },
			rules: "/x/agents/reviewer-rules.md",
			systemPrompt: "You review. Never edit files.",
		});
		// pi's own discovery skips a file without a name; so do we.
		expect(parsePreset("---\ndescription: x\n---\nbody", "/x/a.md", "user")).toBeUndefined();
	});

	it("lists a preset of the wrong shape with its error, and a dispatch naming it is refused", () => {
		const { agentDir, project } = layout();
		writeFileSync(join(agentDir, "agents", "bad.md"), "---\nname: bad\ndescription: d\nthinking: lots\n---\n");
		const [bad] = loadPresets(project, agentDir);
		expect(bad?.error).toContain("thinking must be one of");
		expect(() => findPreset("bad", project, agentDir)).toThrow(/preset bad: .*thinking must be one of/);
		expect(() => findPreset("nope", project, agentDir)).toThrow('no preset named "nope" (presets: bad;');
	});

	it("reads a project's presets and rules only when pi trusts the project; the project's preset wins on a name", () => {
		const { agentDir, project } = layout();
		writeFileSync(join(agentDir, "agents", "reviewer.md"), REVIEWER);
		writeFileSync(
			join(project, ".pi", "agents", "reviewer.md"),
			"---\nname: reviewer\ndescription: the project's\nmodel: faux/faux-1\n---\n",
		);
		writeFileSync(join(project, ".pi", "agent-board", "rules.md"), "## Rules\n- always: ask me\n");
		const cwd = join(project, "src");
		expect(loadPresets(cwd, agentDir).map((p) => [p.name, p.source, p.model])).toEqual([
			["reviewer", "user", "faux/faux-2"],
		]);
		expect(rulesPaths(cwd, agentDir)).toEqual([userRulesPath(agentDir)]);
		writeFileSync(join(agentDir, "trust.json"), JSON.stringify({ [project]: true }));
		expect(loadPresets(cwd, agentDir).map((p) => [p.name, p.source, p.model])).toEqual([
			["reviewer", "project", "faux/faux-1"],
		]);
		expect(rulesPaths(cwd, agentDir, "/p/rules.md")).toEqual([
			"/p/rules.md",
			join(project, ".pi", "agent-board", "rules.md"),
			userRulesPath(agentDir),
		]);
		// A saved "do not trust" wins over defaultProjectTrust: always.
		writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProjectTrust: "always" }));
		writeFileSync(join(agentDir, "trust.json"), JSON.stringify({ [project]: false }));
		expect(loadPresets(cwd, agentDir).map((p) => p.source)).toEqual(["user"]);
		writeFileSync(join(agentDir, "trust.json"), "{}");
		expect(loadPresets(cwd, agentDir).map((p) => p.source)).toEqual(["project"]);
	});
});

describe("what a preset fills", () => {
	const preset = parsePreset(REVIEWER, "/x/agents/reviewer.md", "user")!;

	it("fills a dispatch's missing options; what the caller gave wins", () => {
		expect(applyPreset({ prompt: "p", cwd: "/w", model: "mine/m" }, preset)).toEqual({
			prompt: "p",
			cwd: "/w",
			preset: "reviewer",
			model: "mine/m",
			thinking: "high",
			ponytailMode: "ultra",
			target: "dev",
			worktreeMode: "worktree",
			count: 2,
			budget: { tokens: 50_000 },
		});
	});

	it("sets the form's choices; the remembered ones come back with no preset", () => {
		const remembered = initialChoices(
			{ model: "faux/faux-1", worktreeMode: "none" },
			["faux/faux-1", "faux/faux-2"],
			"/w",
			["dev"],
		);
		expect(presetChoices(preset, remembered)).toEqual({
			...remembered,
			preset: "reviewer",
			model: "faux/faux-2",
			thinking: "high",
			target: "dev",
			worktree: "worktree",
			count: "2",
		});
		expect(remembered).toMatchObject({ preset: "none", model: "faux/faux-1", worktree: "none", target: "local" });
	});
});

describe("subcommands", () => {
	it("parses dispatch --preset/--budget, budget and supervisor replay", () => {
		expect(parseSubcommand("dispatch --preset reviewer --budget 2k look at the diff")).toMatchObject({
			ok: true,
			name: "dispatch",
			text: "look at the diff",
			preset: "reviewer",
			budget: { tokens: 2000 },
		});
		expect(parseSubcommand("dispatch --budget lots x")).toMatchObject({
			ok: false,
			error: expect.stringContaining("--budget needs an amount"),
		});
		expect(parseSubcommand("budget abc 100k")).toEqual({
			ok: true,
			name: "budget",
			id: "abc",
			amount: { tokens: 100_000 },
		});
		expect(parseSubcommand("budget abc")).toMatchObject({
			ok: false,
			error: expect.stringContaining("budget needs an amount"),
		});
		expect(parseSubcommand("supervisor")).toEqual({ ok: true, name: "supervisor", replay: false });
		expect(parseSubcommand("supervisor replay --since 2h")).toMatchObject({
			ok: true,
			name: "supervisor",
			replay: true,
			since: expect.any(Number),
		});
		expect(parseSubcommand("supervisor replay --since whenever")).toMatchObject({
			ok: false,
			error: expect.stringContaining('cannot read "whenever"'),
		});
		expect(parseSubcommand("supervisor frob")).toMatchObject({ ok: false });
	});

	it("reads --since as people write it", () => {
		const now = Date.parse("2025-05-02T12:00:00Z");
		expect(parseSince("2h", now)).toBe(now - 7_200_000);
		expect(parseSince("30m", now)).toBe(now - 1_800_000);
		expect(parseSince("2025-05-01T00:00:00Z", now)).toBe(Date.parse("2025-05-01T00:00:00Z"));
		expect(parseSince("today", now)).toBe(new Date(now).setHours(0, 0, 0, 0));
		expect(parseSince("soon", now)).toBeUndefined();
	});
});
