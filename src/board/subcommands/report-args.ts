/** The words after `/agent-board report`, parsed apart from the report (which loads only when used). */
import { parseSince } from "../../../runner/time-words.mjs";

export const DEFAULT_SINCE = "12h";

/** The words after `report`: `--since <when>` (12h, 2d, today, a date), or nothing (the last 12 hours). */
export function parseReportArgs(rest: string): { ok: true; since: string } | { ok: false; error: string } {
	const words = rest.split(/\s+/).filter(Boolean);
	if (words.length === 0) return { ok: true, since: DEFAULT_SINCE };
	if (words[0] === "--since" && words.length === 2 && words[1]) {
		if (parseSince(words[1]) === undefined)
			return { ok: false, error: `--since: not a time: ${words[1]} (12h, 2d, today, a date)` };
		return { ok: true, since: words[1] };
	}
	return { ok: false, error: "report takes only --since <when>" };
}
