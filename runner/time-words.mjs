// Time in the person's words, written once: "since" for every command and filter that takes one (replay,
// report, search's `since:`, the page's report), and an age ("12s", "4m") for the board, the table and the
// page (served to it as /time-words.mjs: nothing here may import).

/** @type {Record<string, number>} */
const UNIT_MS = { m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * A time before `now`: 30m, 90min, 12h, 1.5d, 2w; "today" (its start, local time); a date (2026-12-01: the
 * day's start, local time) or a date and time. Undefined when it is none of these.
 * @param {string} text @param {number} [now]
 */
export function parseSince(text, now = Date.now()) {
	const value = text.trim().toLowerCase();
	if (value === "today") return new Date(now).setHours(0, 0, 0, 0);
	const relative = /^(\d+(?:\.\d+)?)\s*(m|min|h|d|w)$/.exec(value);
	if (relative) return now - Number(relative[1]) * (UNIT_MS[relative[2] ?? ""] ?? 0);
	const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
	if (day) {
		const at = new Date(Number(day[1]), Number(day[2]) - 1, Number(day[3])).getTime();
		return Number.isNaN(at) ? undefined : at;
	}
	const at = Date.parse(/^\d{4}-\d{2}-\d{2} \d/.test(value) ? value.replace(" ", "T") : text.trim());
	return Number.isNaN(at) ? undefined : at;
}

/**
 * An age as the board shows it: "12s", "4m", "3h", "2d". An age of decades comes from time 0 (a time nobody
 * recorded): it is unknown ("?"), not 20790 days.
 * @param {number} ms
 */
export function formatAge(ms) {
	if (!Number.isFinite(ms) || ms > 30 * 365 * 86_400_000) return "?";
	const s = Math.max(0, Math.floor(ms / 1000));
	if (s < 60) return `${s}s`;
	const m = Math.floor(s / 60);
	if (m < 60) return `${m}m`;
	const h = Math.floor(m / 60);
	if (h < 48) return `${h}h`;
	return `${Math.floor(h / 24)}d`;
}
