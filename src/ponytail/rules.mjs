/**
 * Builds the injected rules from skills/ponytail/SKILL.md, the single source of truth:
 * per-level table rows (`| **lite** | ...`) and examples (`- lite: ...`) of other levels are dropped.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** @typedef {import("./modes.mjs").ActiveLevel} ActiveLevel */

export const SKILLS_DIR = join(dirname(fileURLToPath(import.meta.url)), "../../skills");
export const RULES_FILE = join(SKILLS_DIR, "ponytail/SKILL.md");
export const CONDENSED_LIMIT = 900;
const LEVELS = ["lite", "full", "ultra"];

const ROW = /^\|\s*\*\*([a-z]+)\*\*\s*\|/;
const EXAMPLE = /^\s*-\s*([a-z]+):/;

/** @param {string} text */
export function stripFrontmatter(text) {
	const body = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
	return body.startsWith("---\n") ? body.replace(/^---\n[\s\S]*?\n---\n?/, "") : body;
}

/** @param {string} line @returns {string | undefined} */
function levelOf(line) {
	const tag = ROW.exec(line)?.[1] ?? EXAMPLE.exec(line)?.[1];
	return tag && LEVELS.includes(tag) ? tag : undefined;
}

/** Keeps general lines and only `level`'s rows and examples. */
/** @param {string} skill @param {string} level */
export function filterForLevel(skill, level) {
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

/** @param {ActiveLevel} level */
function header(level) {
	return `PONYTAIL MODE ACTIVE - level: ${level}`;
}

/** Section text for a level (pi wraps it in <ponytail> tags). */
/** @param {string} skill @param {ActiveLevel} level */
export function rulesForLevel(skill, level) {
	if (level === "review") return `${header(level)}. For this run follow the ponytail-review skill given in the user message.`;
	return `${header(level)}\n\n${filterForLevel(skill, level).replace(/^# .*\n+/, "")}`;
}

/** Short ruleset for board workers: core line, the level's row cells, then as many rules as fit. */
/** @param {string} skill @param {ActiveLevel} level */
export function condensedRules(skill, level, limit = CONDENSED_LIMIT) {
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

/** @param {string} row @returns {string[]} */
function cells(row) {
	return row
		.split("|")
		.slice(1, -1)
		.map((cell) => cell.trim().replace(/\*\*/g, ""));
}

/** @type {string | undefined} */
let cached;
/** SKILL.md text; read once per process since it ships with the package. */
export function loadRulesSkill() {
	cached ??= readFileSync(RULES_FILE, "utf8");
	return cached;
}

/** @param {ActiveLevel} level */
export function condensedPonytailRules(level) {
	return condensedRules(loadRulesSkill(), level);
}

/** @param {ActiveLevel} level */
export function ponytailRules(level) {
	return rulesForLevel(loadRulesSkill(), level);
}
