/** The ritual turn's text, and where the skill it refers to lives in this package. */
import { fileURLToPath } from "node:url";

export const RITUAL_CUSTOM_TYPE = "session-handoff-ritual";

/** Leading words of every ritual prompt; tests and transcripts recognise the turn by them. */
export const RITUAL_MARKER = "Session close ritual (session-handoff):";

export const SKILL_PATH = fileURLToPath(new URL("../../skills/session-handoff/SKILL.md", import.meta.url));

export function ritualPrompt(skillPath: string = SKILL_PATH): string {
	return [
		`${RITUAL_MARKER} the task above is finished and this headless run is about to end.`,
		`Read the session-handoff skill at ${skillPath} and follow its "At the end of a session" steps now:`,
		"write the handoff note into .tasks/ (what was done, current state, next steps, open questions).",
		"Do not start new work. Reply with one line naming the note you wrote.",
	].join(" ");
}
