// What a person types in a search (the subcommand, the board's `/`, the page) as words for FTS5 and filters.
// Pure: the index's query (search-query.mjs) turns it into SQL.
import { RUN_STATES } from "../life/vocabulary.mjs";
import { parseSince } from "../time-words.mjs";

/**
 * @typedef {object} ParsedQuery
 * @property {string[]} terms     words and phrases as typed ("postgres deadlock" is one phrase), each one FTS5 phrase
 * @property {string} match       the FTS5 expression (every term), "" when there is none: the filters alone
 * @property {number} [since]     last activity at or after (ms)
 * @property {string[]} on        place prefixes ("local", "build", "build/box2")
 * @property {string[]} states    run states; ["__none__"] for a state that names none
 * @property {string[]} presets   preset name prefixes
 * @property {string[]} files     changed-file path prefixes
 * @property {string[]} errors    what was not understood, in words
 */

const FILTERS = ["since", "on", "s", "preset", "file"];

/** Splits into tokens: whitespace apart, "..." kept whole (also after a filter's colon). @param {string} text */
export function tokenize(text) {
	/** @type {Array<{ text: string, quoted: boolean, key?: string }>} */
	const tokens = [];
	const pattern = /(?:([A-Za-z]+):)?"([^"]*)"?|(\S+)/g;
	for (const m of text.matchAll(pattern)) {
		if (m[2] !== undefined) tokens.push({ text: m[2], quoted: true, ...(m[1] ? { key: m[1].toLowerCase() } : {}) });
		else tokens.push({ text: m[3] ?? "", quoted: false });
	}
	return tokens;
}

/** One word or phrase as an FTS5 phrase: quoted, so AND, NEAR, ^ and the like are words too. @param {string} text */
function phrase(text) {
	const prefix = text.length > 1 && text.endsWith("*");
	const body = prefix ? text.slice(0, -1) : text;
	return `"${body.replace(/"/g, '""')}"${prefix ? " *" : ""}`;
}

/** Words with a letter or digit in them: the tokenizer drops everything else, and an empty phrase matches nothing. @param {string} text */
const hasWord = (text) => /[\p{L}\p{N}]/u.test(text);

/** @param {string} text @param {number} [now] @returns {ParsedQuery} */
export function parseQuery(text, now = Date.now()) {
	/** @type {ParsedQuery} */
	const query = { terms: [], match: "", on: [], states: [], presets: [], files: [], errors: [] };
	for (const token of tokenize(text)) {
		let key = token.key;
		let value = token.text;
		if (!token.quoted) {
			const colon = value.indexOf(":");
			const head = colon > 0 ? value.slice(0, colon).toLowerCase() : "";
			if (FILTERS.includes(head)) {
				key = head;
				value = value.slice(colon + 1);
			}
		}
		if (key && FILTERS.includes(key)) {
			if (!value) {
				query.errors.push(`${key}: needs a value`);
				continue;
			}
			if (key === "since") {
				const at = parseSince(value, now);
				if (at === undefined) query.errors.push(`since:${value} is not a time (30m, 12h, 3d, 2w or 2026-12-01)`);
				else query.since = Math.max(query.since ?? 0, at);
			} else if (key === "on") query.on.push(value.toLowerCase());
			else if (key === "s") {
				const prefix = value.toLowerCase().replace(/-/g, "_");
				const found = RUN_STATES.filter((state) => state.startsWith(prefix));
				// A state that names none matches nothing rather than everything: the person asked for fewer.
				for (const state of found.length > 0 ? found : ["__none__"])
					if (!query.states.includes(state)) query.states.push(state);
			} else if (key === "preset") query.presets.push(value.toLowerCase());
			else query.files.push(value.replace(/^\.\//, ""));
			continue;
		}
		if (key) value = `${key}:${value}`;
		if (!hasWord(value)) continue;
		query.terms.push(value);
	}
	query.match = query.terms.map(phrase).join(" ");
	return query;
}

/** Whether the query asks anything at all (a word or a filter). @param {ParsedQuery} query */
export function isEmptyQuery(query) {
	return (
		query.terms.length === 0 &&
		query.since === undefined &&
		query.on.length + query.states.length + query.presets.length + query.files.length === 0
	);
}
