/**
 * `/agent-board search <words>`: the index brought up to date, then each hit as its row id, name, where it
 * matched and a snippet. Everything shown came from a worker or the person: printed through plain().
 */
import { searchStore } from "../../../runner/search/search.mjs";
import type { SearchHit } from "../../../runner/search/search-query.mjs";
import { clockTime } from "../view-model/row-text.ts";
import { plain } from "../view-model/plain.ts";

/** When a hit was last active: a time today, else its date. */
function when(ms: number, now: number): string {
	if (!ms) return "";
	const date = new Date(ms);
	return date.toDateString() === new Date(now).toDateString() ? clockTime(ms) : date.toISOString().slice(0, 10);
}

/** One hit as lines: its row, where it matched, its snippet (indented). */
export function formatHit(hit: SearchHit, now: number): string[] {
	const tags = [hit.state.replace(/_/g, " "), hit.archived ? "archived" : "", hit.place, when(hit.activeAt, now)]
		.filter(Boolean)
		.join(", ");
	const head = `${hit.rowId}  ${plain(hit.name)}  (${plain(tags)})`;
	const where = hit.fields.length > 0 ? `  matched in ${plain(hit.fields.join(", "))}` : "";
	return [head + where, ...(hit.snippet ? [`    ${plain(hit.snippet.text)}`] : [])];
}

export async function runSearch(storeDir: string, text: string, now = Date.now()): Promise<string> {
	const result = await searchStore(storeDir, text, { limit: 50, now });
	const lines: string[] = [];
	for (const error of result.query.errors) lines.push(`(${plain(error)})`);
	if (result.note) lines.push(`(${plain(result.note)})`);
	if (result.hits.length === 0) lines.push(`no rows match ${plain(text)}`);
	for (const hit of result.hits) lines.push(...formatHit(hit, now));
	return lines.join("\n");
}
