/**
 * The board's `/` also searches everything that ran: when the filter has words (beyond `s:` and `on:`), the
 * search index (runner/search/) is asked for them after a short pause in typing, and the rows it finds join
 * the list, wherever the words matched (a tool's output, the agent's text, an answer); archived rows too.
 * They are the feed's own rows, so peek, reply, open and attach act on them as on any row. The index is
 * loaded and opened only here, on the first search: the board's open never touches it.
 */
import type { SearchHit } from "../../../runner/search/search-query.mjs";
import { parseFilter } from "../view-model/list-model.ts";

/** A pause in typing this long starts a search. */
const TYPING_PAUSE_MS = 250;

type Search = (storeDir: string, text: string) => Promise<readonly SearchHit[]>;

async function searchIndex(storeDir: string, text: string): Promise<readonly SearchHit[]> {
	const { searchStore } = await import("../../../runner/search/search.mjs");
	return (await searchStore(storeDir, text, { limit: 200 })).hits;
}

export class BoardSearch {
	/** The rows the last search found for the filter as it is now, by id. */
	private found = new Map<string, SearchHit>();
	private wanted = "";
	private timer: ReturnType<typeof setTimeout> | undefined;
	private readonly storeDir: string;
	/** Called when the hits for the current filter came (or went). */
	private readonly onHits: () => void;
	private readonly search: Search;
	private readonly pauseMs: number;

	constructor(storeDir: string, onHits: () => void, search: Search = searchIndex, pauseMs = TYPING_PAUSE_MS) {
		this.storeDir = storeDir;
		this.onHits = onHits;
		this.search = search;
		this.pauseMs = pauseMs;
	}

	/** The filter changed: hits of an older filter are dropped at once, a search for this one starts after a pause. */
	setFilter(text: string): void {
		if (text === this.wanted) return;
		this.wanted = text;
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
		const hadHits = this.found.size > 0;
		this.found = new Map();
		if (hadHits) this.onHits();
		if (parseFilter(text).words.length === 0) return;
		this.timer = setTimeout(() => {
			this.timer = undefined;
			void this.run(text);
		}, this.pauseMs);
	}

	private async run(text: string): Promise<void> {
		let hits: readonly SearchHit[];
		try {
			hits = await this.search(this.storeDir, text);
		} catch {
			// The filter still narrows by name and state: a search that failed adds nothing.
			return;
		}
		if (text !== this.wanted) return;
		this.found = new Map(hits.map((hit) => [hit.rowId, hit]));
		this.onHits();
	}

	ids(): ReadonlySet<string> {
		return new Set(this.found.keys());
	}

	hasHits(): boolean {
		return this.found.size > 0;
	}

	hit(id: string | undefined): SearchHit | undefined {
		return id === undefined ? undefined : this.found.get(id);
	}

	dispose(): void {
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
	}
}
