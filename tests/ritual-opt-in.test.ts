import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RitualGuard } from "../src/ritual/guard.ts";
import { hasTriggerLine, isOptedIn, type ProjectFacts, TRIGGER_LINE } from "../src/ritual/opt-in.ts";
import { probeProject } from "../src/ritual/probe.ts";
import { RITUAL_MARKER, ritualPrompt, SKILL_PATH } from "../src/ritual/prompt.ts";

const opted: ProjectFacts = {
	agentsMd: `# Rules\n\n${TRIGGER_LINE}\n`,
	claudeMd: undefined,
	hasTasksDir: true,
	hasGit: true,
};

describe("hasTriggerLine", () => {
	it("finds the trigger as a line of its own, with or without markdown decoration", () => {
		expect(hasTriggerLine(TRIGGER_LINE)).toBe(true);
		expect(hasTriggerLine(`intro\r\n  ${TRIGGER_LINE}  \r\nmore`)).toBe(true);
		expect(hasTriggerLine(`- ${TRIGGER_LINE}`)).toBe(true);
		expect(hasTriggerLine(`* **Session Handoff: read on start, write on end.**`)).toBe(true);
		expect(hasTriggerLine(`> \`${TRIGGER_LINE}\``)).toBe(true);
		expect(hasTriggerLine(`## ${TRIGGER_LINE}`)).toBe(true);
		expect(hasTriggerLine(`1. ${TRIGGER_LINE}`)).toBe(true);
	});

	it("ignores mentions inside prose, partial phrases and empty files", () => {
		expect(hasTriggerLine(`We never use "${TRIGGER_LINE}" here.`)).toBe(false);
		expect(hasTriggerLine("session handoff: read on start")).toBe(false);
		expect(hasTriggerLine("session handoff: read on start, write on end, and more")).toBe(false);
		expect(hasTriggerLine("")).toBe(false);
	});
});

describe("isOptedIn", () => {
	it("needs the trigger line in AGENTS.md or CLAUDE.md, plus .tasks/ and .git", () => {
		expect(isOptedIn(opted)).toBe(true);
		expect(isOptedIn({ ...opted, agentsMd: undefined, claudeMd: TRIGGER_LINE })).toBe(true);
		expect(isOptedIn({ ...opted, agentsMd: "# nothing here", claudeMd: TRIGGER_LINE })).toBe(true);
	});

	it("is false when any part is missing", () => {
		expect(isOptedIn({ ...opted, agentsMd: undefined })).toBe(false);
		expect(isOptedIn({ ...opted, agentsMd: "# Rules\nsession handoff: never" })).toBe(false);
		expect(isOptedIn({ ...opted, hasTasksDir: false })).toBe(false);
		expect(isOptedIn({ ...opted, hasGit: false })).toBe(false);
	});
});

describe("probeProject", () => {
	let dir: string | undefined;
	afterEach(() => {
		if (dir) rmSync(dir, { recursive: true, force: true });
		dir = undefined;
	});

	it("reads the instruction files and sees .tasks/ and .git (a worktree's .git file counts)", () => {
		dir = mkdtempSync(join(tmpdir(), "pab-ritual-probe-"));
		expect(probeProject(dir)).toEqual({
			agentsMd: undefined,
			claudeMd: undefined,
			hasTasksDir: false,
			hasGit: false,
		});
		writeFileSync(join(dir, "CLAUDE.md"), TRIGGER_LINE);
		writeFileSync(join(dir, ".git"), "gitdir: /elsewhere\n");
		mkdirSync(join(dir, ".tasks"));
		const facts = probeProject(dir);
		expect(facts).toEqual({ agentsMd: undefined, claudeMd: TRIGGER_LINE, hasTasksDir: true, hasGit: true });
		expect(isOptedIn(facts)).toBe(true);
	});

	it("does not take a .tasks file for the directory", () => {
		dir = mkdtempSync(join(tmpdir(), "pab-ritual-probe-"));
		writeFileSync(join(dir, ".tasks"), "");
		expect(probeProject(dir).hasTasksDir).toBe(false);
	});
});

describe("RitualGuard", () => {
	it("grants one claim per cwd until reset", () => {
		const guard = new RitualGuard();
		expect(guard.claim("/a")).toBe(true);
		expect(guard.claim("/a")).toBe(false);
		expect(guard.claim("/b")).toBe(true);
		guard.reset();
		expect(guard.claim("/a")).toBe(true);
	});
});

describe("ritual prompt", () => {
	it("starts with the marker and points at the shipped skill, whose end-of-session section exists", () => {
		const prompt = ritualPrompt();
		expect(prompt.startsWith(RITUAL_MARKER)).toBe(true);
		expect(prompt).toContain(SKILL_PATH);
		const skill = readFileSync(SKILL_PATH, "utf8");
		expect(skill).toMatch(/^---\nname: session-handoff\ndescription: .+\n---\n/);
		expect(skill).toContain("## At the end of a session");
		expect(skill).toContain("## At the start of a session");
		expect(prompt).toContain('"At the end of a session"');
	});
});
