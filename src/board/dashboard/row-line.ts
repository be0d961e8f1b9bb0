/**
 * One list line of a row: `<marker><glyph> <name> <summary> <right slots>`, fitted to a width.
 * Column widths come from the rows on screen only, so a repaint formats what is on screen and
 * nothing else.
 */
import { basename } from "node:path";
import { visibleWidth } from "@earendil-works/pi-tui";
import type { BoardRow, DiffStats, FileOverlap } from "../engine/types.ts";
import {
	attemptTags,
	clean,
	fitSummary,
	formatAge,
	formatDiff,
	formatUsage,
	isUnread,
	shortPath,
	STATE_GLYPH,
	type SummaryParts,
	summaryParts,
	targetOf,
} from "../view-model/row-text.ts";
import { fit } from "../view-model/ui-types.ts";

export interface RowLineParts {
	marker: string;
	glyph: string;
	name: string;
	/** " [2/3]" of an attempt: kept when the name is cut. */
	nameSuffix: string;
	summary: SummaryParts;
	/** Right-hand slots in display order (SLOTS), "" when empty. */
	right: string[];
}

/** Right-hand slots in display order, and the order they are given room in (age, archived, target, diff, location, model, usage). */
export const SLOTS = ["archived", "age", "usage", "diff", "model", "target", "location"] as const;
const SLOT_PRIORITY = [1, 0, 5, 3, 6, 4, 2];
const RIGHT_ALIGNED = [false, true, true, true, false, false, false];

export interface LineContext {
	home?: string;
	/** Row whose session this pi is attached to: marked "@". */
	attachedId?: string;
	/** Diff stats from the UI's async cache (the engine no longer computes them in list). */
	diff?: (row: BoardRow) => DiffStats | undefined;
	/** Overlaps known now (the last full list's are older). */
	overlaps?: (row: BoardRow) => readonly FileOverlap[] | undefined;
	/** Show where each row runs (some row of the board runs on a target). */
	targets?: boolean;
}

/** The row's name without the attempt suffix the engine gave it ("… [2/3]", "… fork 2/3"). */
function splitName(row: BoardRow): { name: string; suffix: string } {
	const name = clean(row.name);
	const attempt = row.attempt;
	if (!attempt) return { name, suffix: "" };
	const suffix = ` [${attempt.index}/${attempt.count}]`;
	const base = name.replace(
		new RegExp(`\\s*(\\[${attempt.index}/${attempt.count}\\]|fork ${attempt.index}/${attempt.count})$`),
		"",
	);
	return { name: base, suffix };
}

export function rowLineParts(row: BoardRow, now: number, context: LineContext = {}): RowLineParts {
	const { home, attachedId } = context;
	// The last path segment is what tells rows apart; the full path is in peek.
	const location = row.worktreePath
		? `wt:${row.branch ?? basename(row.worktreePath)}`
		: basename(shortPath(row.repo ?? row.cwd, home)) || "/";
	const summary = summaryParts(row, now);
	const { name, suffix } = splitName(row);
	return {
		marker: row.id === attachedId ? "@" : isUnread(row) ? "*" : " ",
		glyph: STATE_GLYPH[row.state],
		name,
		nameSuffix: suffix,
		summary: {
			head: `${attemptTags(row, context.overlaps?.(row) ?? row.overlaps)}${summary.head}`,
			tail: summary.tail,
		},
		right: [
			row.archived ? "[archived]" : "",
			formatAge(now - row.lastActivityAt),
			formatUsage(row),
			formatDiff(row, context.diff ? context.diff(row) : row.diff),
			clean(row.modelUsed ?? row.model),
			context.targets ? `on ${targetOf(row)}` : "",
			clean(location),
		],
	};
}

/** Column widths shared by the rows on screen, so names, summaries and right slots line up. */
export interface RowLayout {
	name: number;
	right: number[];
}

export function rowLayout(parts: readonly RowLineParts[]): RowLayout {
	const layout: RowLayout = { name: 0, right: SLOTS.map(() => 0) };
	for (const p of parts) {
		layout.name = Math.max(layout.name, visibleWidth(p.name) + visibleWidth(p.nameSuffix));
		p.right.forEach((slot, i) => {
			layout.right[i] = Math.max(layout.right[i] ?? 0, visibleWidth(slot));
		});
	}
	// Age changes while the board is open; reserve its widest short form.
	layout.right[1] = Math.max(layout.right[1] ?? 0, 3);
	return layout;
}

function pad(text: string, width: number, right: boolean): string {
	const cut = fit(text, width);
	if (!right) return cut;
	const trimmed = cut.trimEnd();
	return " ".repeat(Math.max(0, width - visibleWidth(trimmed))) + trimmed;
}

function fitName(parts: RowLineParts, width: number): string {
	const suffixWidth = visibleWidth(parts.nameSuffix);
	if (suffixWidth === 0 || width <= suffixWidth + 2) return fit(parts.name + parts.nameSuffix, width);
	if (visibleWidth(parts.name) + suffixWidth <= width) return fit(parts.name + parts.nameSuffix, width);
	return fit(parts.name, width - suffixWidth).trimEnd() + parts.nameSuffix;
}

/**
 * One list line within `width` columns. The name is what tells rows apart: it takes what it needs
 * (up to half the line, or 40 columns) while the summary keeps a fifth of it; then right slots get room in priority order while the
 * summary keeps a third, so tokens and age go before the name is cut, and one row's optional column
 * never pushes another's off. A live reply shows its newest words.
 */
export function formatRowLine(
	parts: RowLineParts,
	width: number,
	layout: RowLayout = rowLayout([parts]),
): { head: string; name: string; summary: string; right: string } {
	const head = `${parts.marker}${parts.glyph} `;
	let rest = Math.max(0, width - visibleWidth(head));
	// At most half the line (or 40 columns) however long the name: wide lines keep their slots.
	const nameRoom = Math.max(
		8,
		Math.min(Math.max(40, Math.floor(rest / 2)), rest - Math.max(12, Math.floor(width / 5)) - 1),
	);
	const nameWidth = Math.min(Math.max(1, layout.name), nameRoom, rest);
	const name = fit(fitName(parts, nameWidth), nameWidth);
	rest -= nameWidth;
	const slotCap = Math.max(16, Math.floor(width * 0.15));
	const minSummary = Math.max(12, Math.floor(width / 3));
	const chosen = new Set<number>();
	let rightWidth = 0;
	for (const i of SLOT_PRIORITY) {
		const slotWidth = Math.min(layout.right[i] ?? 0, slotCap);
		if (slotWidth === 0) continue;
		if (rest - rightWidth - (slotWidth + 2) < minSummary + 1) continue;
		chosen.add(i);
		rightWidth += slotWidth + 2;
	}
	let rightText = "";
	for (let i = 0; i < SLOTS.length; i++) {
		if (chosen.has(i))
			rightText += `  ${pad(parts.right[i] ?? "", Math.min(layout.right[i] ?? 0, slotCap), RIGHT_ALIGNED[i] ?? false)}`;
	}
	const summaryWidth = Math.max(0, rest - rightWidth - (rest > 0 ? 1 : 0));
	const summary = summaryWidth > 0 ? ` ${fit(fitSummary(parts.summary, summaryWidth), summaryWidth)}` : "";
	return { head: visibleWidth(head) <= width ? head : fit(head, width), name, summary, right: rightText };
}
