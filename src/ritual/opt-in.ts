/**
 * Opt-in rule for the close ritual, as pure logic over what a project directory contains.
 * It mirrors the session-handoff skill's own opt-in, so the extension and the skill agree.
 */

export const TRIGGER_LINE = "session handoff: read on start, write on end";

/** What the probe found in one working directory. Missing instruction files are undefined. */
export interface ProjectFacts {
	agentsMd: string | undefined;
	claudeMd: string | undefined;
	hasTasksDir: boolean;
	hasGit: boolean;
}

/**
 * True when some line of the text is the trigger line. Markdown decoration around the line
 * (list bullets, quote markers, headings, backticks, emphasis) and letter case are ignored, so
 * `- **Session handoff: read on start, write on end**` counts; prose that merely mentions the
 * phrase mid-sentence does not.
 */
export function hasTriggerLine(text: string): boolean {
	for (const raw of text.split("\n")) {
		const line = raw
			.trim()
			.replace(/^(?:[-*+>#]+\s*|\d+[.)]\s*)+/, "")
			.replace(/^[`*_]+|[`*_]+$/g, "")
			.trim()
			.replace(/\.$/, "")
			.toLowerCase();
		if (line === TRIGGER_LINE) return true;
	}
	return false;
}

export function isOptedIn(facts: ProjectFacts): boolean {
	if (!facts.hasTasksDir || !facts.hasGit) return false;
	return [facts.agentsMd, facts.claudeMd].some((text) => text !== undefined && hasTriggerLine(text));
}
