/**
 * Worker and model text is untrusted: before any of it reaches a terminal, escape sequences are
 * removed and lone control characters become visible placeholders, so an answer cannot write the
 * clipboard (OSC 52), retitle the window (OSC 0), clear the screen, plant hyperlinks (OSC 8) or
 * reorder what the user reads (bidi overrides). Pure and idempotent: sanitising twice changes nothing.
 */

export interface SanitizeOptions {
	/** Keep line breaks (transcripts, questions, answers); otherwise they become spaces. */
	multiline?: boolean;
}

/**
 * Complete escape sequences, 7-bit and 8-bit forms: CSI (ESC [ / 0x9b), OSC (ESC ] / 0x9d, ended by
 * BEL or ST), DCS / SOS / PM / APC (ESC P X ^ _ / 0x90 0x98 0x9e 0x9f, ended by ST) and the short
 * ESC <intermediates> <final> forms (charset selection, keypad modes, RIS). They are dropped whole:
 * their payload means nothing to a reader and keeping it would clutter coloured tool output.
 */
const SEQUENCE =
	/(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)|\x1b[ -/]*[0-~]/g;

/** Anything that needs work: C0, DEL, C1, bidi embeddings/overrides/isolates/marks, line separators. */
const SUSPECT = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** What is left after sequences are gone, one character at a time. */
const LEFTOVER = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const TAB = "    ";

function placeholder(char: string, multiline: boolean): string {
	const code = char.charCodeAt(0);
	if (char === "\n" || char === "\u2028" || char === "\u2029") return multiline ? "\n" : " ";
	if (char === "\t") return multiline ? TAB : " ";
	// C0 and DEL have printable "control pictures" (U+2400 block): ␛ for ESC, ␇ for BEL, ␡ for DEL.
	if (code < 0x20) return String.fromCharCode(0x2400 + code);
	if (code === 0x7f) return "\u2421";
	// C1 controls and bidi controls have no picture: the replacement character marks where one was.
	return "\ufffd";
}

export function sanitizeText(text: string, options: SanitizeOptions = {}): string {
	if (typeof text !== "string") return "";
	if (!SUSPECT.test(text)) return text;
	const multiline = options.multiline === true;
	return text
		.replace(SEQUENCE, "")
		.replace(/\r\n?/g, "\n")
		.replace(LEFTOVER, (char) => placeholder(char, multiline));
}

/** Single-line helper for optional fields: undefined stays undefined. */
export function sanitizeOptional(text: string | undefined, options?: SanitizeOptions): string | undefined {
	return text === undefined ? undefined : sanitizeText(text, options);
}

/**
 * What a user typed, echoed back inert: every control, DEL, C1 and bidi character as its \u escape (an
 * id typed with an escape sequence in it is shown as typed, and does nothing to the terminal).
 */
export function inert(text: string): string {
	return text.replace(LEFTOVER, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
