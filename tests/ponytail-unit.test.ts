import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { appendCommandLog, commandLogFile, readCommandLog } from "../src/ponytail/command-log.ts";
import { resolveSettings, userConfigFile, writeDefaultMode } from "../src/ponytail/config.ts";
import {
	completePonytailArgs,
	isDeactivationPhrase,
	modeFromBranch,
	parsePonytailArgs,
} from "../src/ponytail/modes.ts";
import {
	CONDENSED_LIMIT,
	condensedRules,
	filterForLevel,
	loadRulesSkill,
	rulesForLevel,
} from "../src/ponytail/rules.ts";
import { expandSkill } from "../src/ponytail/skill-commands.ts";

const LEVELS = ["lite", "full", "ultra"] as const;
let dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
	dirs = [];
});
function scratch(): string {
	const dir = mkdtempSync(join(tmpdir(), "ponytail-unit-"));
	dirs.push(dir);
	return dir;
}

describe("parsePonytailArgs", () => {
	it("parses modes, subcommands and rejects everything else with the valid list", () => {
		expect(parsePonytailArgs("")).toEqual({ kind: "on" });
		expect(parsePonytailArgs("  ULTRA ")).toEqual({ kind: "set", mode: "ultra" });
		expect(parsePonytailArgs("off")).toEqual({ kind: "set", mode: "off" });
		expect(parsePonytailArgs("status")).toEqual({ kind: "status" });
		expect(parsePonytailArgs("default lite")).toEqual({ kind: "default", mode: "lite" });
		expect(parsePonytailArgs("log")).toEqual({ kind: "log", count: 10 });
		expect(parsePonytailArgs("log 3")).toEqual({ kind: "log", count: 3 });
		for (const bad of [
			"review",
			"bogus",
			"default",
			"default review",
			"log -1",
			"log x",
			"lite extra",
			"default lite x",
		]) {
			const parsed = parsePonytailArgs(bad);
			expect(parsed.kind, bad).toBe("error");
			if (parsed.kind === "error")
				expect(parsed.message).toContain("Valid: off, lite, full, ultra, status, default");
		}
	});

	it("completes modes, subcommands and modes after default", () => {
		expect(completePonytailArgs("")).toEqual(["off", "lite", "full", "ultra", "status", "default", "log"]);
		expect(completePonytailArgs("u")).toEqual(["ultra"]);
		expect(completePonytailArgs("default f")).toEqual(["default full"]);
		expect(completePonytailArgs("zz")).toEqual([]);
		// A whole word completes nothing: enter runs it at once.
		expect(completePonytailArgs("lite")).toEqual([]);
		expect(completePonytailArgs("default lite")).toEqual([]);
	});
});

describe("isDeactivationPhrase", () => {
	it("matches the whole message only, ignoring case and trailing punctuation", () => {
		for (const yes of ["stop ponytail", "Stop Ponytail!", "normal mode.", "  NORMAL   MODE?! "])
			expect(isDeactivationPhrase(yes), yes).toBe(true);
		for (const no of ["add a normal mode toggle", "please stop ponytail now", "normal", "stop ponytails"])
			expect(isDeactivationPhrase(no), no).toBe(false);
	});
});

describe("modeFromBranch", () => {
	it("returns the last valid stored mode on the branch", () => {
		const entry = (mode: unknown) => ({ type: "custom", customType: "ponytail-mode", data: { mode } });
		expect(modeFromBranch([])).toBeUndefined();
		expect(
			modeFromBranch([
				entry("lite"),
				{ type: "message" },
				entry("ultra"),
				entry("bogus"),
				{ type: "custom", customType: "other", data: { mode: "off" } },
			]),
		).toBe("ultra");
	});
});

describe("rules from SKILL.md", () => {
	const skill = loadRulesSkill();
	it("keeps only the active level's rows and examples; full stays within budget", () => {
		for (const level of LEVELS) {
			const text = rulesForLevel(skill, level);
			expect(text).toContain(`level: ${level}`);
			expect(text).toContain(`| **${level}** |`);
			expect(text).toMatch(new RegExp(`^- ${level}:`, "m"));
			for (const other of LEVELS.filter((l) => l !== level)) {
				expect(text).not.toContain(`| **${other}** |`);
				expect(text).not.toMatch(new RegExp(`^- ${other}:`, "m"));
			}
			expect(text).not.toContain("description:");
		}
		expect(rulesForLevel(skill, "full").length).toBeLessThanOrEqual(2800);
	});

	it("filters a synthetic skill: general lines stay, other levels' lines go", () => {
		const text =
			"---\nname: x\n---\nkeep\n| **lite** | a |\n| **ultra** | b |\n- lite: c\n- ultra: d\n- general: e\n";
		expect(filterForLevel(`\uFEFF${text}`, "ultra")).toBe("keep\n| **ultra** | b |\n- ultra: d\n- general: e");
	});

	it("condensed rules carry the level's row and the core line within the limit", () => {
		for (const level of LEVELS) {
			const text = condensedRules(skill, level);
			expect(text.length).toBeLessThanOrEqual(CONDENSED_LIMIT);
			expect(text).toContain("lazy senior developer");
			expect(text).toContain("Never trade correctness");
			const row = skill.split("\n").find((line) => line.startsWith(`| **${level}** |`));
			const firstCell = row?.split("|")[2]?.trim();
			expect(firstCell && text.includes(firstCell)).toBe(true);
		}
	});

	it("expands a skill command the way pi does", () => {
		const text = expandSkill("ponytail-review", "src/a.ts");
		expect(text.startsWith('<skill name="ponytail-review" location=')).toBe(true);
		expect(text).toContain("# Ponytail review");
		expect(text.endsWith("</skill>\n\nsrc/a.ts")).toBe(true);
	});
});

describe("resolveSettings", () => {
	it("orders env, trusted project, user config, built-in", () => {
		const dir = scratch();
		const project = join(dir, "project.json");
		const user = join(dir, "user.json");
		writeFileSync(project, JSON.stringify({ defaultMode: "lite" }));
		writeFileSync(user, `\uFEFF${JSON.stringify({ defaultMode: "ultra", statusBar: false })}`);
		expect(
			resolveSettings({ env: { PONYTAIL_DEFAULT_MODE: "off" }, projectFile: project, userFile: user }),
		).toMatchObject({ defaultMode: "off", source: "env PONYTAIL_DEFAULT_MODE" });
		expect(resolveSettings({ env: {}, projectFile: project, userFile: user })).toMatchObject({
			defaultMode: "lite",
			source: project,
			statusBar: false,
		});
		expect(resolveSettings({ env: {}, userFile: user })).toMatchObject({
			defaultMode: "ultra",
			source: user,
			warnings: [],
		});
		expect(resolveSettings({ env: {}, userFile: join(dir, "missing.json") })).toMatchObject({
			defaultMode: "full",
			source: "built-in",
			statusBar: true,
			warnings: [],
		});
	});

	it("warns about broken files and bad values, naming them, and falls back", () => {
		const dir = scratch();
		const user = join(dir, "user.json");
		writeFileSync(user, "{ not json");
		const broken = resolveSettings({ env: { PONYTAIL_DEFAULT_MODE: "loud" }, userFile: user });
		expect(broken.defaultMode).toBe("full");
		expect(broken.warnings).toHaveLength(2);
		expect(broken.warnings.join("\n")).toContain(user);
		expect(broken.warnings.join("\n")).toContain("PONYTAIL_DEFAULT_MODE");
		writeFileSync(user, JSON.stringify({ defaultMode: "review" }));
		expect(resolveSettings({ env: {}, userFile: user }).warnings[0]).toContain("defaultMode");
	});

	it("condensed workers get no badge and a quiet start; env switches override config", () => {
		expect(resolveSettings({ env: { PONYTAIL_CONDENSED: "1" }, userFile: "/nonexistent/x.json" })).toMatchObject({
			condensed: true,
			statusBar: false,
			quietStartup: true,
		});
		expect(
			resolveSettings({ env: { PONYTAIL_STATUS: "0", PONYTAIL_QUIET: "1" }, userFile: "/nonexistent/x.json" }),
		).toMatchObject({ statusBar: false, quietStartup: true });
	});

	it("user config path follows XDG_CONFIG_HOME, else HOME/.config", () => {
		expect(userConfigFile({ XDG_CONFIG_HOME: "/x" })).toBe("/x/ponytail/config.json");
		expect(userConfigFile({ HOME: "/h" })).toBe("/h/.config/ponytail/config.json");
	});
});

describe("writeDefaultMode", () => {
	it("merges other keys and refuses to overwrite a broken file", () => {
		const dir = scratch();
		const file = join(dir, "ponytail", "config.json");
		writeDefaultMode(file, "lite");
		expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ defaultMode: "lite" });
		writeFileSync(file, `\uFEFF${JSON.stringify({ statusBar: false, defaultMode: "full" })}`);
		writeDefaultMode(file, "ultra");
		expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ statusBar: false, defaultMode: "ultra" });
		writeFileSync(file, "{oops");
		expect(() => writeDefaultMode(file, "off")).toThrow(file);
		expect(readFileSync(file, "utf8")).toBe("{oops");
	});
});

describe("command log", () => {
	it("appends JSON lines, reads the last N, rotates at the limit, and can be switched off", () => {
		const dir = scratch();
		const file = join(dir, "ponytail", "commands.log");
		for (let i = 0; i < 5; i++)
			appendCommandLog(file, { command: "ponytail", args: String(i), timestamp: `t${i}` }, 200);
		expect(statSync(`${file}.1`).size).toBeGreaterThanOrEqual(200);
		const last = readCommandLog(file, 2);
		expect(last.map((e) => e.args)).toEqual(
			readFileSync(file, "utf8")
				.trim()
				.split("\n")
				.slice(-2)
				.map((l) => (JSON.parse(l) as { args: string }).args),
		);
		expect(last.at(-1)).toEqual({ command: "ponytail", args: "4", timestamp: "t4" });
		expect(commandLogFile({ XDG_CACHE_HOME: "/c" })).toBe("/c/ponytail/commands.log");
		expect(commandLogFile({ HOME: "/h" })).toBe("/h/.cache/ponytail/commands.log");
		expect(commandLogFile({ PONYTAIL_COMMAND_LOG: "0", HOME: "/h" })).toBeUndefined();
	});
});
