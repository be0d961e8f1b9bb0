/**
 * Minimal stand-in (UI branch) for the hardening engineer's sanitizer; same name and signature, so the
 * merge keeps theirs. Worker/model text is untrusted: strip every control and escape sequence so it
 * can never drive the terminal. `multiline` keeps "\n" (and turns tabs into spaces); otherwise all
 * whitespace runs become one space.
 */
// CSI, OSC (BEL or ST terminated), other ESC sequences, then any remaining C0/C1 control or bidi override.
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b[@-Z\\-_]?|\x9b[0-?]*[ -/]*[@-~]/g;
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

export function sanitizeText(text: string, options: { multiline?: boolean } = {}): string {
	const stripped = text.replace(ESCAPES, "");
	if (options.multiline) return stripped.replace(/\r\n?/g, "\n").replace(/\t/g, "    ").replace(CONTROLS, "");
	return stripped.replace(/[\t\n\r\u2028\u2029]+/g, " ").replace(CONTROLS, "");
}
