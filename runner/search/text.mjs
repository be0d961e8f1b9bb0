// Text from a worker is untrusted: what the index hands out (snippets, names) carries no escape sequence
// and no control character. The same patterns as src/board/engine/sanitize.ts, which the runner cannot load.

const SEQUENCE =
	/(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)|\x1b[ -/]*[0-~]/g;
const CONTROL = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** Private-use characters the index marks a snippet's matches with; never kept from the text itself. */
export const MARK_OPEN = "\ue000";
export const MARK_CLOSE = "\ue001";
const MARKS = /[\ue000\ue001]/g;

/** One line of plain text: sequences dropped, controls (line breaks too) as spaces, runs of blanks as one. @param {unknown} text */
export function cleanLine(text) {
	if (typeof text !== "string") return "";
	return text.replace(SEQUENCE, "").replace(CONTROL, " ").replace(/ {2,}/g, " ").trim();
}

/** Text as it goes into the index: sequences dropped (their payload is no words), marks removed. @param {string} text */
export function indexText(text) {
	return text.replace(SEQUENCE, " ").replace(MARKS, "");
}

/**
 * A snippet as FTS5 made it (matches between MARK_OPEN and MARK_CLOSE) as clean text and the ranges of
 * its matches.
 * @param {string} marked
 * @returns {{ text: string, matches: Array<[number, number]> }}
 */
export function splitSnippet(marked) {
	const clean = cleanLine(marked);
	/** @type {Array<[number, number]>} */
	const matches = [];
	let text = "";
	let open = -1;
	for (const char of clean) {
		if (char === MARK_OPEN) open = text.length;
		else if (char === MARK_CLOSE) {
			if (open >= 0 && text.length > open) matches.push([open, text.length]);
			open = -1;
		} else text += char;
	}
	return { text, matches };
}
