/** Untrusted text (row names, worker output, file names) made safe to print: the one sanitiser (../sanitize.ts). */
import { sanitizeText } from "../engine/sanitize.ts";

/** One line: escape sequences removed, controls and bidi marks shown as placeholders, line breaks become spaces. */
export function plain(text: string): string {
	return sanitizeText(text);
}

/** Multi-line text (a diff): the same, with line breaks kept. */
export function plainLines(text: string): string {
	return sanitizeText(text, { multiline: true });
}
