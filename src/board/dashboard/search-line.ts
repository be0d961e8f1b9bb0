/** The line under the board's list that says where the selected row matched the filter's words, and the words around. */
import type { SearchHit } from "../../../runner/search/search-query.mjs";
import { sanitizeText } from "../engine/sanitize.ts";
import { fit, type UiTheme } from "../view-model/ui-types.ts";

/** Characters kept before the first match, so the match itself shows on a narrow line. */
const LEAD = 24;

export function hitLine(hit: SearchHit, width: number, theme: UiTheme): string {
	const where = `found in ${hit.fields.join(", ") || "its row"}`;
	const snippet = hit.snippet;
	if (!snippet) return fit(theme.fg("dim", sanitizeText(where)), width);
	const from = Math.max(0, (snippet.matches[0]?.[0] ?? 0) - LEAD);
	let text = "";
	let at = from;
	for (const [start, end] of snippet.matches) {
		if (end <= at) continue;
		const s = Math.max(start, at);
		text += sanitizeText(snippet.text.slice(at, s)) + theme.bold(sanitizeText(snippet.text.slice(s, end)));
		at = end;
	}
	text += sanitizeText(snippet.text.slice(at));
	return fit(`${theme.fg("dim", `${sanitizeText(where)}: `)}${from > 0 ? "…" : ""}${text}`, width);
}
