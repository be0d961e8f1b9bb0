/**
 * Board settings that reach outside the dashboard (strip, pi notices, OS notifications) and the
 * OS-level notification itself: OSC 777 (Ghostty, iTerm2, WezTerm, urxvt) or OSC 99 (Kitty), as pi's
 * `notify.ts` example does. Each can be turned off in the board's settings or by environment.
 */
import { sanitizeText } from "../engine/sanitize.ts";
import { type BoardSettings, DEFAULT_SETTINGS } from "../view-model/prefs.ts";

export { type BoardSettings, DEFAULT_SETTINGS } from "../view-model/prefs.ts";

const OFF = new Set(["0", "off", "false", "no"]);

/** Saved settings, then AGENT_BOARD_STRIP / AGENT_BOARD_NOTICES / AGENT_BOARD_OS_NOTIFY=off on top. */
export function resolveSettings(
	saved: Partial<BoardSettings> | undefined,
	env: NodeJS.ProcessEnv = process.env,
): BoardSettings {
	const pick = (key: keyof BoardSettings, envName: string): boolean => {
		const value = env[envName];
		if (value !== undefined && OFF.has(value.toLowerCase())) return false;
		return saved?.[key] ?? DEFAULT_SETTINGS[key];
	};
	return {
		strip: pick("strip", "AGENT_BOARD_STRIP"),
		notices: pick("notices", "AGENT_BOARD_NOTICES"),
		osNotify: pick("osNotify", "AGENT_BOARD_OS_NOTIFY"),
	};
}

/** The escape sequence for one notification; its fields carry no control characters or separators. */
export function osNotifySequence(title: string, body: string, env: NodeJS.ProcessEnv = process.env): string {
	const safe = (text: string) => sanitizeText(text).replace(/;/g, ",").slice(0, 200);
	if (env.KITTY_WINDOW_ID) return `\x1b]99;i=1:d=0;${safe(title)}\x1b\\\x1b]99;i=1:p=body;${safe(body)}\x1b\\`;
	return `\x1b]777;notify;${safe(title)};${safe(body)}\x07`;
}

export function osNotify(write: (text: string) => void, title: string, body: string): void {
	try {
		write(osNotifySequence(title, body));
	} catch {
		// A closed terminal must not break the board.
	}
}
