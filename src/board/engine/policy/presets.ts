/**
 * Presets: who runs where, in pi's agents/*.md format (examples/extensions/subagent): YAML frontmatter
 * `name`, `description`, `model`, and ours: `thinking`, `ponytail`, `target` (or `pool`, a target's name
 * until pools exist), `worktree`, `attempts`, `budget`, `rules` (a rules file, relative to the preset);
 * the body is extra system text for the agent. Read from ~/.pi/agent/agents/ and, in a trusted project,
 * the nearest .pi/agents/ (which wins on a name). A file of the wrong shape is listed with its error and
 * refused by a dispatch that names it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { parseFrontmatter } from "@earendil-works/pi-coding-agent";
import { parseAmount } from "../../../../runner/life/budget.mjs";
import { MAX_ATTEMPTS, THINKING_LEVELS, WORKTREE_MODES } from "../../../../runner/life/vocabulary.mjs";
import { BoardError } from "../../../../runner/life/reasons.mjs";
import type { BudgetLimit, PresetSummary, ThinkingLevel, WorktreeMode } from "../types.ts";
import { MODES } from "../../../ponytail/modes.ts";
import { isDirectory, trustedProjectPath } from "./project-trust.ts";

export interface Preset extends PresetSummary {
	filePath: string;
	/** The body: extra system text for the agent ("" when none). */
	systemPrompt: string;
	/** An absolute rules file the row's supervisor reads first. */
	rules?: string;
}

const MAX_PRESET_BYTES = 64 * 1024;

const oneOf = <T extends string>(words: readonly T[], value: unknown): T | undefined =>
	words.find((word) => word === value);

function text(value: unknown): string | undefined {
	if (typeof value === "number") return String(value);
	return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

/** The frontmatter's fields, checked; the first problem is the preset's error. */
function fields(front: Record<string, unknown>, filePath: string): { values: Partial<Preset>; error?: string } {
	const values: Partial<Preset> = {};
	const problem = (field: string, what: string) => ({ values, error: `${filePath}: ${field} ${what}` });
	const model = text(front.model);
	if (model) values.model = model;
	if (front.thinking !== undefined) {
		const thinking = oneOf<ThinkingLevel>(THINKING_LEVELS, text(front.thinking));
		if (!thinking) return problem("thinking", `must be one of ${THINKING_LEVELS.join(", ")}`);
		values.thinking = thinking;
	}
	const ponytail = front.ponytail ?? front["ponytail-mode"];
	if (ponytail !== undefined) {
		const mode = oneOf(MODES, text(ponytail));
		if (!mode) return problem("ponytail", `must be one of ${MODES.join(", ")}`);
		values.ponytailMode = mode;
	}
	const target = text(front.target) ?? text(front.pool);
	if (target) values.target = target;
	if (front.worktree !== undefined) {
		const raw = front.worktree === true ? "worktree" : front.worktree === false ? "none" : text(front.worktree);
		const mode = oneOf<WorktreeMode>(WORKTREE_MODES, raw);
		if (!mode) return problem("worktree", `must be one of ${WORKTREE_MODES.join(", ")} (or true/false)`);
		values.worktreeMode = mode;
	}
	if (front.attempts !== undefined) {
		const attempts = Number(front.attempts);
		if (!Number.isInteger(attempts) || attempts < 1 || attempts > MAX_ATTEMPTS)
			return problem("attempts", `must be a whole number from 1 to ${MAX_ATTEMPTS}`);
		values.attempts = attempts;
	}
	if (front.budget !== undefined) {
		const budget: BudgetLimit | undefined = parseAmount(String(front.budget));
		if (!budget) return problem("budget", `must be an amount such as 50k (tokens) or $2 (cost)`);
		values.budget = budget;
	}
	const rules = text(front.rules);
	if (rules) {
		const expanded = rules.startsWith("~/") ? join(homedir(), rules.slice(2)) : rules;
		values.rules = isAbsolute(expanded) ? expanded : resolve(dirname(filePath), expanded);
	}
	return { values };
}

/** One preset file; undefined when it is not one (no name: pi's discovery skips those too). */
export function parsePreset(content: string, filePath: string, source: "user" | "project"): Preset | undefined {
	let parsed: ReturnType<typeof parseFrontmatter>;
	try {
		parsed = parseFrontmatter(content);
	} catch (error) {
		const name = filePath.split("/").at(-1)?.replace(/\.md$/, "") ?? filePath;
		return {
			name,
			description: "",
			source,
			filePath,
			systemPrompt: "",
			error: `${filePath}: ${error instanceof Error ? error.message : String(error)}`,
		};
	}
	const front = parsed.frontmatter;
	const name = text(front.name);
	if (!name) return undefined;
	const { values, error } = fields(front, filePath);
	return {
		...values,
		name,
		description: text(front.description) ?? "",
		source,
		filePath,
		systemPrompt: parsed.body.trim(),
		...(error ? { error } : {}),
	};
}

function loadDir(dir: string, source: "user" | "project"): Preset[] {
	if (!isDirectory(dir)) return [];
	let names: string[];
	try {
		names = readdirSync(dir)
			.filter((name) => name.endsWith(".md"))
			.sort();
	} catch {
		return [];
	}
	return names.flatMap((name) => {
		const filePath = join(dir, name);
		try {
			const content = readFileSync(filePath, "utf8");
			if (Buffer.byteLength(content) > MAX_PRESET_BYTES)
				return [
					{
						name: name.slice(0, -3),
						description: "",
						source,
						filePath,
						systemPrompt: "",
						error: `${filePath}: larger than ${MAX_PRESET_BYTES} bytes`,
					},
				];
			const preset = parsePreset(content, filePath, source);
			return preset ? [preset] : [];
		} catch {
			return [];
		}
	});
}

/** Every preset a dispatch from `cwd` may name, by name (a trusted project's win). */
export function loadPresets(cwd: string, agentDir: string): Preset[] {
	const byName = new Map<string, Preset>();
	for (const preset of loadDir(join(agentDir, "agents"), "user")) byName.set(preset.name, preset);
	const project = trustedProjectPath(cwd, "agents", agentDir);
	if (project) for (const preset of loadDir(project, "project")) byName.set(preset.name, preset);
	return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The preset `name`, or a refusal naming what exists. */
export function findPreset(name: string, cwd: string, agentDir: string): Preset {
	const presets = loadPresets(cwd, agentDir);
	const preset = presets.find((candidate) => candidate.name === name);
	if (!preset) {
		const known = presets.map((candidate) => candidate.name).join(", ") || "none";
		throw new BoardError(
			"invalid",
			`no preset named "${name}" (presets: ${known}; they live in ~/.pi/agent/agents/ and a trusted project's .pi/agents/)`,
		);
	}
	if (preset.error) throw new BoardError("invalid", `preset ${name}: ${preset.error}`);
	return preset;
}

/** What the form and the tools show of a preset (no body). */
export function presetSummary(preset: Preset): PresetSummary {
	const { filePath: _file, systemPrompt: _prompt, rules: _rules, ...summary } = preset;
	return summary;
}
