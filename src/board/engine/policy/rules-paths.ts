/**
 * Which rules files a row's supervisor reads, most specific first: its preset's, its trusted project's
 * `.pi/agent-board/rules.md`, the user's `~/.pi/agent/agent-board/rules.md`. Decided when a run is
 * launched (run.json /supervise); the files themselves are read at each question.
 */
import { join } from "node:path";
import { getAgentDir } from "@earendil-works/pi-coding-agent";
import { trustedProjectPath } from "./project-trust.ts";

export const PROJECT_RULES = join("agent-board", "rules.md");

export function agentDirOf(env: NodeJS.ProcessEnv): string {
	return env.PI_CODING_AGENT_DIR || getAgentDir();
}

export function userRulesPath(agentDir: string): string {
	return join(agentDir, "agent-board", "rules.md");
}

export function rulesPaths(cwd: string, agentDir: string, presetRules?: string): string[] {
	const project = trustedProjectPath(cwd, PROJECT_RULES, agentDir);
	return [presetRules, project, userRulesPath(agentDir)].filter((path): path is string => path !== undefined);
}
