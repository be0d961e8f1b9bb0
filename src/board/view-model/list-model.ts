/**
 * The board's grouped list: pinned rows first, then one group per state (needs input first), newest
 * activity first within a group, filtered by text and `s:<state>`. Built once when the board opens
 * (a sort, no formatting); after that one changed row costs a binary search and a splice, so a
 * repaint after a change never walks the store.
 */
import type { BoardRow } from "../engine/types.ts";
import { type Filter, matches, parseFilter } from "../../../runner/row-filter.mjs";
import { STATE_LABEL, STATE_ORDER, targetOf } from "./row-text.ts";

export { parseFilter } from "../../../runner/row-filter.mjs";

/** The row as the filter reads it: where it runs as the board says it. */
export function rowMatches(row: BoardRow, filter: Filter): boolean {
	return matches({ ...row, target: targetOf(row) }, filter);
}

export type ListItem = { kind: "header"; label: string; count: number } | { kind: "row"; row: BoardRow };

export interface ViewOptions {
	filter?: string;
	showArchived?: boolean;
	/** Rows the search found for the filter's words (dashboard/board-search.ts): listed, archived or not. */
	found?: ReadonlySet<string>;
}

const GROUP_LABELS: readonly string[] = ["Pinned", ...STATE_ORDER.map((state) => STATE_LABEL[state])];

function groupOf(row: BoardRow): number {
	return row.pinned ? 0 : 1 + STATE_ORDER.indexOf(row.state);
}

/** Newest activity first, then id: negative when `a` comes first. */
function order(a: BoardRow, b: BoardRow): number {
	return b.lastActivityAt - a.lastActivityAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** First index in `group` whose row does not come before `row`. */
function lowerBound(group: readonly BoardRow[], row: BoardRow): number {
	let lo = 0;
	let hi = group.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if (order(group[mid] as BoardRow, row) < 0) lo = mid + 1;
		else hi = mid;
	}
	return lo;
}

export class ListModel {
	private readonly groups: BoardRow[][] = GROUP_LABELS.map(() => []);
	/** Each listed row as it was placed: its old sort key finds it again after it changed. */
	private readonly placed = new Map<string, BoardRow>();
	private filter: Filter = parseFilter("");
	private showArchived = false;
	private found: ReadonlySet<string> = new Set();
	/** Rows placed since the list was built, for tests and the bench (a change places one row). */
	placements = 0;

	constructor(rows: Iterable<BoardRow> = [], options: ViewOptions = {}) {
		this.reset(rows, options);
	}

	/** Rebuilds from every row (opening, a new filter, a full relist). */
	reset(rows: Iterable<BoardRow>, options: ViewOptions = {}): void {
		this.filter = parseFilter(options.filter ?? "");
		this.showArchived = options.showArchived === true;
		this.found = options.found ?? new Set();
		for (const group of this.groups) group.length = 0;
		this.placed.clear();
		for (const row of rows) {
			if (!this.visible(row)) continue;
			this.groups[groupOf(row)]?.push(row);
			this.placed.set(row.id, row);
		}
		for (const group of this.groups) group.sort(order);
	}

	private visible(row: BoardRow): boolean {
		return this.found.has(row.id) || ((this.showArchived || !row.archived) && rowMatches(row, this.filter));
	}

	/** One row changed (`row`) or is gone (undefined); returns whether the list changed. */
	update(id: string, row: BoardRow | undefined): boolean {
		const old = this.placed.get(id);
		if (old) {
			const group = this.groups[groupOf(old)] ?? [];
			const at = lowerBound(group, old);
			if (group[at]?.id === id) group.splice(at, 1);
			this.placed.delete(id);
		}
		if (!row || !this.visible(row)) return old !== undefined;
		const group = this.groups[groupOf(row)] ?? [];
		group.splice(lowerBound(group, row), 0, row);
		this.placed.set(id, row);
		this.placements += 1;
		return true;
	}

	get rowCount(): number {
		return this.placed.size;
	}

	/** Headers and rows. */
	get length(): number {
		let n = 0;
		for (const group of this.groups) if (group.length > 0) n += group.length + 1;
		return n;
	}

	has(id: string): boolean {
		return this.placed.has(id);
	}

	/** The k-th row (headers not counted). */
	rowAt(k: number): BoardRow | undefined {
		if (k < 0) return undefined;
		for (const group of this.groups) {
			if (k < group.length) return group[k];
			k -= group.length;
		}
		return undefined;
	}

	/** Position of a row among rows and among items (headers counted); -1 when not listed. */
	position(id: string): { row: number; item: number } {
		const placed = this.placed.get(id);
		if (!placed) return { row: -1, item: -1 };
		const target = groupOf(placed);
		let rows = 0;
		let items = 0;
		for (let g = 0; g < target; g++) {
			const size = this.groups[g]?.length ?? 0;
			rows += size;
			if (size > 0) items += size + 1;
		}
		const at = lowerBound(this.groups[target] ?? [], placed);
		return { row: rows + at, item: items + 1 + at };
	}

	/** The row at item index `item`, or (a header there) the first row after it, or the last row. */
	rowNear(item: number): BoardRow | undefined {
		const found = this.items(Math.max(0, item), Math.max(0, item) + 2).find((entry) => entry.kind === "row");
		return found?.kind === "row" ? found.row : this.rowAt(this.rowCount - 1);
	}

	/** Items [start, end): the window on screen. */
	items(start: number, end: number): ListItem[] {
		const out: ListItem[] = [];
		let index = 0;
		this.groups.forEach((group, g) => {
			if (group.length === 0 || index >= end) return;
			const size = group.length + 1;
			if (index + size > start) {
				if (index >= start) out.push({ kind: "header", label: GROUP_LABELS[g] ?? "", count: group.length });
				const from = Math.max(0, start - index - 1);
				const to = Math.min(group.length, end - index - 1);
				for (let i = from; i < to; i++) out.push({ kind: "row", row: group[i] as BoardRow });
			}
			index += size;
		});
		return out;
	}

	/** Every listed row in list order. */
	rows(): BoardRow[] {
		return this.groups.flat();
	}
}

/** The whole list at once (plain-text table, tests). */
export function buildListItems(rows: readonly BoardRow[], options: ViewOptions = {}): ListItem[] {
	const model = new ListModel(rows, options);
	return model.items(0, model.length);
}

export function rowItems(items: readonly ListItem[]): BoardRow[] {
	const rows: BoardRow[] = [];
	for (const item of items) if (item.kind === "row") rows.push(item.row);
	return rows;
}
