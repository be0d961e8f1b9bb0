/** The one stderr line a failed ritual leaves. Its reason can carry provider or model text, which is untrusted. */

const MAX_REASON = 300;

/** Control characters (C0, DEL, C1) become spaces so no escape sequence reaches the terminal. */
export function printable(text: string): string {
	return text
		.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ")
		.replace(/ {2,}/g, " ")
		.trim();
}

export function failureLine(reason: string): string {
	const clean = printable(reason);
	const cut = clean.length > MAX_REASON ? `${clean.slice(0, MAX_REASON - 1)}…` : clean;
	return `session-handoff ritual failed (the task's answer stands): ${cut || "unknown reason"}`;
}
