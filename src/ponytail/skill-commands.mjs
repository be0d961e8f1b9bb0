/** The /ponytail-<skill> commands: each sends its SKILL.md to the model as a user message. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SKILLS_DIR, stripFrontmatter } from "./rules.mjs";

/** @typedef {import("@earendil-works/pi-coding-agent").ExtensionAPI} ExtensionAPI @typedef {import("@earendil-works/pi-coding-agent").ExtensionCommandContext} ExtensionCommandContext */

export const SKILL_COMMANDS = /** @type {const} */ ({
	"ponytail-review": "One-shot ponytail review of changes or files for over-engineering (this run only)",
	"ponytail-audit": "Audit code for bloat: dead code, needless deps and abstractions",
	"ponytail-debt": "List tech debt worth paying now versus leaving alone",
	"ponytail-gain": "Estimate what ponytail saved in this session",
	"ponytail-help": "Explain ponytail modes and commands",
});
/** @typedef {keyof typeof SKILL_COMMANDS} SkillCommand */

export const REVIEW_MARKER = '<skill name="ponytail-review"';

/** The same block pi builds for `/skill:name args`, for when the package skills are not loaded (e.g. `pi -e`). */
/** @param {string} name @param {string} args */
export function expandSkill(name, args, skillsDir = SKILLS_DIR) {
	const file = join(skillsDir, name, "SKILL.md");
	const body = stripFrontmatter(readFileSync(file, "utf8")).trim();
	const block = `<skill name="${name}" location="${file}">\nReferences are relative to ${join(skillsDir, name)}.\n\n${body}\n</skill>`;
	return args ? `${block}\n\n${args}` : block;
}

/**
 * Sends the skill as a user message. Without a UI (print/json) pi exits once the command returns,
 * so there the handler waits for the run it started (`runStarted` resolves on its agent_start).
 * @param {ExtensionAPI} pi @param {ExtensionCommandContext} ctx @param {SkillCommand} name @param {string} args
 * @param {() => Promise<boolean>} runStarted
 */
export async function sendSkill(pi, ctx, name, args, runStarted) {
	const trimmed = args.trim();
	const idle = ctx.isIdle();
	const loaded = pi.getCommands().some((command) => command.name === `skill:${name}`);
	// Busy: queue after the current run instead of being rejected.
	const delivery = idle ? {} : { deliverAs: /** @type {const} */ ("followUp") };
	const started = idle && !ctx.hasUI ? runStarted() : undefined;
	if (loaded) pi.sendUserMessage(`/skill:${name}${trimmed ? ` ${trimmed}` : ""}`, { ...delivery, expandPromptTemplates: true });
	else pi.sendUserMessage(expandSkill(name, trimmed), delivery);
	if (started && (await started)) await ctx.waitForIdle();
}
