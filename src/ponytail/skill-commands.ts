/** The /ponytail-<skill> commands: each sends its SKILL.md to the model as a user message. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { SKILLS_DIR, stripFrontmatter } from "./rules.ts";

export const SKILL_COMMANDS = {
	"ponytail-review": "One-shot ponytail review of changes or files for over-engineering (this run only)",
	"ponytail-audit": "Audit code for bloat: dead code, needless deps and abstractions",
	"ponytail-debt": "List tech debt worth paying now versus leaving alone",
	"ponytail-gain": "Estimate what ponytail saved in this session",
	"ponytail-help": "Explain ponytail modes and commands",
} as const;
export type SkillCommand = keyof typeof SKILL_COMMANDS;

export const REVIEW_MARKER = '<skill name="ponytail-review"';

/** The same block pi builds for `/skill:name args`, for when the package skills are not loaded (e.g. `pi -e`). */
export function expandSkill(name: string, args: string, skillsDir = SKILLS_DIR): string {
	const file = join(skillsDir, name, "SKILL.md");
	const body = stripFrontmatter(readFileSync(file, "utf8")).trim();
	const block = `<skill name="${name}" location="${file}">\nReferences are relative to ${join(skillsDir, name)}.\n\n${body}\n</skill>`;
	return args ? `${block}\n\n${args}` : block;
}

/**
 * Sends the skill as a user message. Without a UI (print/json) pi exits once the command returns,
 * so there the handler waits for the run it started (`runStarted` resolves on its agent_start).
 */
export async function sendSkill(
	pi: ExtensionAPI,
	ctx: ExtensionCommandContext,
	name: SkillCommand,
	args: string,
	runStarted: () => Promise<boolean>,
): Promise<void> {
	const trimmed = args.trim();
	const idle = ctx.isIdle();
	const loaded = pi.getCommands().some((command) => command.name === `skill:${name}`);
	// Busy: queue after the current run instead of being rejected.
	const delivery = idle ? {} : { deliverAs: "followUp" as const };
	const started = idle && !ctx.hasUI ? runStarted() : undefined;
	if (loaded)
		pi.sendUserMessage(`/skill:${name}${trimmed ? ` ${trimmed}` : ""}`, { ...delivery, expandPromptTemplates: true });
	else pi.sendUserMessage(expandSkill(name, trimmed), delivery);
	if (started && (await started)) await ctx.waitForIdle();
}
