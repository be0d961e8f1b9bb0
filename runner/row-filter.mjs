// The filter words of the board's `/` and the page's filter, written once: `s:<state>` (a prefix, e.g.
// `s:need`; several widen), `on:<target>` (a prefix; `on:local` is this machine; several widen), and words,
// each of which must appear in the row. Served to the page as /row-filter.mjs: nothing here may import.

/** @typedef {{ states: string[], targets: string[], words: string[] }} Filter */

/** @param {string} text @returns {Filter} */
export function parseFilter(text) {
	/** @type {string[]} */
	const states = [];
	/** @type {string[]} */
	const targets = [];
	/** @type {string[]} */
	const words = [];
	for (const token of text.toLowerCase().split(/\s+/)) {
		if (!token) continue;
		// An empty or unknown `s:` matches nothing rather than everything: the person asked for a narrower list.
		if (token.startsWith("s:")) states.push(token.slice(2).replace(/-/g, "_") || "\0");
		else if (token.startsWith("on:")) targets.push(token.slice(3));
		else words.push(token);
	}
	return { states, targets, words };
}

/**
 * Whether a row passes `filter`; `target` is where it runs as the board says it ("local", "box",
 * "pool/member").
 * @typedef {{ id: string, name: string, state: string, target: string, summary: string, cwd: string }} RowFields
 * @param {RowFields & { repo?: string, model?: string, question?: string, branch?: string }} row
 * @param {Filter} filter
 */
export function matches(row, filter) {
	if (filter.states.length > 0 && !filter.states.some((prefix) => row.state.startsWith(prefix))) return false;
	if (filter.targets.length > 0 && !filter.targets.some((prefix) => placeMatches(row.target, prefix))) return false;
	if (filter.words.length === 0) return true;
	const hay = [
		row.id,
		row.name,
		row.summary,
		row.cwd,
		row.repo ?? "",
		row.model ?? "",
		row.question ?? "",
		row.branch ?? "",
	]
		.join("\n")
		.toLowerCase();
	return filter.words.every((word) => hay.includes(word));
}

/**
 * Whether `on:<prefix>` takes a row placed at `place`: the whole place ("build/box2") or either of its
 * names, so `on:box2` finds the rows any pool placed on box2 as well as those dispatched to it.
 * @param {string} place @param {string} prefix
 */
export function placeMatches(place, prefix) {
	const lower = place.toLowerCase();
	return lower.startsWith(prefix) || lower.split("/").some((name) => name.startsWith(prefix));
}
