/** The one stderr line a failed ritual leaves. Its reason can carry provider or model text, which is untrusted. */

const MAX_REASON = 300;

/** Control characters (C0, DEL, C1) become spaces so no escape sequence reaches the terminal. @param {string} text */
export function printable(text) {
	return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").replace(/ {2,}/g, " ").trim();
}

/** @param {string} reason */
export function failureLine(reason) {
	const clean = printable(reason);
	const cut = clean.length > MAX_REASON ? `${clean.slice(0, MAX_REASON - 1)}…` : clean;
	return `session-handoff ritual failed (the task's answer stands): ${cut || "unknown reason"}`;
}
