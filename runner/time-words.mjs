// "since" in the person's words, for every command and filter that takes one (replay, report, search's
// `since:`, the page's report): written once.

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
