// The board's list: rows grouped as in the TUI (pinned, then needs input first), newest activity first
// in a group, filtered as the TUI's `/` filters (`s:<state>`, `on:<target>`, words). Each group draws
// its first rows and a button for more, so a store of thousands of rows stays light on a phone. A
// change redraws only the groups it touches, moving existing cards instead of making new ones.
import { el } from "./dom.js";
import { RowCard } from "./row-card.js";
import { matches, parseFilter } from "./row-filter.mjs";

/** @typedef {import("../server/row-json.ts").PageRow} PageRow */

const FIRST = 50;
const MORE = 100;

export class BoardView {
	/** @param {HTMLElement} root @param {string[]} groups @param {import("./row-card.js").CardContext} ctx */
	constructor(root, groups, ctx) {
		this.root = root;
		this.labels = [...groups, "Archived"];
		this.ctx = ctx;
		/** @type {Map<string, PageRow>} */
		this.rows = new Map();
		/** @type {Map<string, RowCard>} */
		this.cards = new Map();
		this.filter = parseFilter("");
		this.showArchived = false;
		this.shown = this.labels.map(() => FIRST);
		this.sections = this.labels.map((label, index) => {
			const list = el("ul", { class: "rows" });
			const title = el("h2", { class: "group-title" });
			const more = el("button", {
				class: "more",
				attrs: { type: "button" },
				on: { click: () => this.showMore(index) },
			});
			const section = el("section", { class: "group" }, [title, list, more]);
			section.hidden = true;
			root.append(section);
			return { label, list, title, more, section };
		});
		this.empty = el("p", { class: "empty", text: "No rows yet. Start an agent with New." });
		root.append(this.empty);
	}

	groupOf(row) {
		return row.archived ? this.labels.length - 1 : row.group;
	}

	/** Every row anew (a snapshot after connecting). */
	reset(rows) {
		const archived = [...this.rows.values()].filter((row) => row.archived);
		this.rows.clear();
		for (const row of [...archived, ...rows]) this.rows.set(row.id, row);
		this.redraw(this.labels.map((_, i) => i));
	}

	/** Rows that changed or went; redraws their old and new groups only. */
	apply(rows, removed = []) {
		const dirty = new Set();
		for (const id of removed) {
			const old = this.rows.get(id);
			if (old) dirty.add(this.groupOf(old));
			this.rows.delete(id);
		}
		for (const row of rows) {
			const old = this.rows.get(row.id);
			if (old) dirty.add(this.groupOf(old));
			dirty.add(this.groupOf(row));
			this.rows.set(row.id, row);
			this.cards.get(row.id)?.update(row);
		}
		this.redraw([...dirty]);
	}

	setFilter(text) {
		this.filter = parseFilter(text);
		this.redraw(this.labels.map((_, i) => i));
	}

	setArchived(show, rows = []) {
		this.showArchived = show;
		for (const row of rows) this.rows.set(row.id, row);
		if (!show) for (const [id, row] of this.rows) if (row.archived) this.rows.delete(id);
		this.redraw(this.labels.map((_, i) => i));
	}

	showMore(index) {
		this.shown[index] += MORE;
		this.redraw([index]);
	}

	card(id) {
		return this.cards.get(id);
	}

	/** Shows a known row's card beyond its group's first rows (a link to it: "Show more" as far as it). */
	expose(id) {
		const row = this.rows.get(id);
		if (!row || this.cards.has(id)) return;
		const index = this.groupOf(row);
		while (!this.cards.has(id) && this.shown[index] < this.rows.size) this.showMore(index);
	}

	redraw(groups) {
		for (const index of groups) this.drawGroup(index);
		// Cards no group shows any more are dropped (an opened one is kept: its answer box may hold text).
		const shown = new Set();
		for (const { list } of this.sections)
			for (const node of list.children) shown.add(/** @type {HTMLElement} */ (node).dataset.id);
		for (const id of this.cards.keys()) if (!shown.has(id) && !this.ctx.expanded.has(id)) this.cards.delete(id);
		this.empty.hidden = this.sections.some((s) => !s.section.hidden);
	}

	drawGroup(index) {
		const group = this.sections[index];
		if (!group) return;
		const archivedGroup = index === this.labels.length - 1;
		const rows = [];
		if (!archivedGroup || this.showArchived)
			for (const row of this.rows.values())
				if (this.groupOf(row) === index && matches(row, this.filter)) rows.push(row);
		rows.sort((a, b) => b.lastActivityAt - a.lastActivityAt || (a.id < b.id ? -1 : 1));
		group.section.hidden = rows.length === 0;
		group.title.textContent = `${group.label} (${rows.length})`;
		const visible = rows.slice(0, this.shown[index]);
		visible.forEach((row, i) => {
			let card = this.cards.get(row.id);
			if (!card) {
				card = new RowCard(row, this.ctx);
				this.cards.set(row.id, card);
			}
			const at = group.list.children[i];
			if (at !== card.root) group.list.insertBefore(card.root, at ?? null);
		});
		while (group.list.children.length > visible.length) group.list.lastElementChild?.remove();
		const hidden = rows.length - visible.length;
		group.more.hidden = hidden <= 0;
		group.more.textContent = `Show ${Math.min(hidden, MORE)} more of ${hidden}`;
	}
}

/** "3 rows · 1 running · 1 need input", as the board's header counts. */
export function countsText(counts) {
	const parts = [`${counts.rows} row${counts.rows === 1 ? "" : "s"}`];
	if (counts.running) parts.push(`${counts.running} running`);
	if (counts.waiting) parts.push(`${counts.waiting} need input`);
	return parts.join(" · ");
}
