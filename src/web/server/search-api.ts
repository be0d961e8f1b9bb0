/**
 * GET /api/search?q=<words>: the board's search (runner/search/) for the page, as the subcommand and the
 * board's `/` make it: the index brought up to date by its writer process, then read here. Hits' text is
 * cleaned by the index; the page puts it in as text.
 */
import { searchStore } from "../../../runner/search/search.mjs";
import { HttpError } from "./http-util.ts";

/** A query longer than this is no search a person typed. */
const MAX_QUERY = 1000;

export async function searchApi(storeDir: string, q: string): Promise<Record<string, unknown>> {
	if (q.length > MAX_QUERY) throw new HttpError(400, `a search is at most ${MAX_QUERY} characters`);
	const result = await searchStore(storeDir, q, { limit: 50 });
	return {
		hits: result.hits,
		errors: result.query.errors,
		...(result.note ? { note: result.note } : {}),
	};
}
