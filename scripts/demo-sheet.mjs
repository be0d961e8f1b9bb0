// The demo's key sheet, laid out for a width: two columns when they fit, else one, prose wrapped at
// words. Shared by the terminal print before pi starts and the entry pi shows in its chat, so neither
// breaks a word at 80 columns.

/** @type {ReadonlyArray<readonly [string, string]>} */
const KEYS = [
	["/agent-board", "open the board"],
	["n", "new agent: type a prompt, enter starts it"],
	["enter", "peek a row"],
	["r", "reply to a row (answers a question)"],
	["o", "open: a running row's live console"],
	["t", "transcript"],
	["c", "compare attempts: m merges, k keeps one"],
	["?", "every key"],
	["q", "close the board"],
];

const PROSE = [
	'Prompts with "database" ask a question, "slow" take 45 s, "fail" fail; anything else finishes in 3 s, and in its own worktree (attempts: ctrl+o in the new-agent form) writes GREETING.md, so attempts have something to compare and merge.',
];

/** @param {string} text @param {number} width */
function wrapWords(text, width) {
	const lines = [];
	let line = "";
	for (const word of text.split(/\s+/).filter(Boolean)) {
		if (line && line.length + 1 + word.length > width) {
			lines.push(line);
			line = word;
		} else line = line ? `${line} ${word}` : word;
	}
	if (line) lines.push(line);
	return lines;
}

/** The sheet's lines within `width` columns; `dir` is the throwaway directory it names. @param {number} width @param {string} dir */
export function sheetLines(width, dir) {
	const keyWidth = Math.max(...KEYS.map(([key]) => key.length));
	const cell = (/** @type {readonly [string, string]} */ [key, what]) => `${key.padEnd(keyWidth)}  ${what}`;
	const cellWidth = Math.max(...KEYS.map((entry) => cell(entry).length));
	const lines = [...wrapWords("Agent board demo: a scripted model, no API key. Throwaway files:", width), dir];
	if (2 + cellWidth * 2 + 4 <= width) {
		const half = Math.ceil(KEYS.length / 2);
		for (let i = 0; i < half; i++) {
			const right = KEYS[i + half];
			const left = KEYS[i];
			if (left) lines.push(`  ${cell(left).padEnd(cellWidth)}    ${right ? cell(right) : ""}`.trimEnd());
		}
	} else {
		for (const [key, what] of KEYS) {
			const [first = "", ...rest] = wrapWords(what, Math.max(10, width - keyWidth - 4));
			lines.push(`  ${key.padEnd(keyWidth)}  ${first}`, ...rest.map((more) => `  ${" ".repeat(keyWidth)}  ${more}`));
		}
	}
	for (const text of PROSE) lines.push(...wrapWords(text, width));
	return lines;
}
