// The filter words of the TUI's `/` (view-model/list-model.ts's parseFilter and rowMatches), for the
// page's rows: `s:<state>` (a prefix, e.g. `s:need`; several widen), `on:<target>` (a prefix; `on:local`
// is this machine; several widen), and words, each of which must appear in the row.

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
		// An empty `s:` matches nothing rather than everything, as in the TUI.
		if (token.startsWith("s:")) states.push(token.slice(2).replace(/-/g, "_") || "\0");
		else if (token.startsWith("on:")) targets.push(token.slice(3));
		else words.push(token);
	}
	return { states, targets, words };
}

/**
 * @param {{ id: string, name: string, state: string, target: string, summary: string, cwd: string, repo?: string, model?: string, question?: string, branch?: string }} row
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
 * A pool's row reads "pool/member": `on:<member>` finds it as `on:<pool>` does (list-model.ts's placeMatches).
 * @param {string} place @param {string} prefix
 */
function placeMatches(place, prefix) {
	const lower = place.toLowerCase();
	return lower.startsWith(prefix) || lower.split("/").some((name) => name.startsWith(prefix));
}
