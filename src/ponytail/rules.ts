/**
 * Builds the injected rules from skills/ponytail/SKILL.md, the single source of truth:
 * per-level table rows (`| **lite** | ...`) and examples (`- lite: ...`) of other levels are dropped.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ActiveLevel } from "./modes.ts";

export const SKILLS_DIR = join(dirname(fileURLToPath(import.meta.url)), "../../skills");
export const RULES_FILE = join(SKILLS_DIR, "ponytail/SKILL.md");
export const CONDENSED_LIMIT = 900;
const LEVELS = ["lite", "full", "ultra"] as const;

const ROW = /^\|\s*\*\*([a-z]+)\*\*\s*\|/;
const EXAMPLE = /^\s*-\s*([a-z]+):/;

export function stripFrontmatter(text: string): string {
	const body = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
	return body.startsWith("---\n") ? body.replace(/^---\n[\s\S]*?\n---\n?/, "") : body;
}

function levelOf(line: string): string | undefined {
	const tag = ROW.exec(line)?.[1] ?? EXAMPLE.exec(line)?.[1];
	return tag && (LEVELS as readonly string[]).includes(tag) ? tag : undefined;
}

/** Keeps general lines and only `level`'s rows and examples. */
export function filterForLevel(skill: string, level: string): string {
	return stripFrontmatter(skill)
		.split("\n")
		.filter((line) => {
			const tag = levelOf(line);
			return tag === undefined || tag === level;
		})
		.join("\n")
		.replace(/\n{3,}/g, "\n\n")
		.trim();
}

function header(level: ActiveLevel): string {
	return `PONYTAIL MODE ACTIVE - level: ${level}`;
}

/** Section text for a level (pi wraps it in <ponytail> tags). */
export function rulesForLevel(skill: string, level: ActiveLevel): string {
	if (level === "review")
		return `${header(level)}. For this run follow the ponytail-review skill given in the user message.`;
	return `${header(level)}\n\n${filterForLevel(skill, level).replace(/^# .*\n+/, "")}`;
}

/** Short ruleset for board workers: core line, the level's row cells, then as many rules as fit. */
export function condensedRules(skill: string, level: ActiveLevel, limit = CONDENSED_LIMIT): string {
	if (level === "review") return rulesForLevel(skill, level);
	const lines = stripFrontmatter(skill).split("\n");
	const core = lines.find((line) => line.startsWith("Core:"))?.replace(/^Core:\s*/, "") ?? "";
	const headerRow = lines.find((line) => line.startsWith("| Level |"));
	const columns = headerRow ? cells(headerRow).slice(1) : [];
	const row = lines.find((line) => ROW.exec(line)?.[1] === level);
	const levelText = row
		? cells(row)
				.slice(1)
				.map((cell, i) => (columns[i] ? `${columns[i]}: ${cell}` : cell))
				.join(" ")
		: "";
	const rules = lines.filter((line) => line.startsWith("- ") && levelOf(line) === undefined);
	const parts = [`${header(level)}. ${core}`, levelText];
	for (const rule of rules) {
		if ([...parts, rule].join("\n").length > limit) break;
		parts.push(rule);
	}
	return parts.filter(Boolean).join("\n");
}

function cells(row: string): string[] {
	return row
		.split("|")
		.slice(1, -1)
		.map((cell) => cell.trim().replace(/\*\*/g, ""));
}

let cached: string | undefined;
/** SKILL.md text; read once per process since it ships with the package. */
export function loadRulesSkill(): string {
	cached ??= readFileSync(RULES_FILE, "utf8");
	return cached;
}

export function condensedPonytailRules(level: ActiveLevel): string {
	return condensedRules(loadRulesSkill(), level);
}

export function ponytailRules(level: ActiveLevel): string {
	return rulesForLevel(loadRulesSkill(), level);
}
