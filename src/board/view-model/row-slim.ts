/**
 * What the feed keeps of a row nobody looks at in full: everything the list, strip, footer and
 * notices show, without the strings only the peek shows (recent events, the stderr tail, receipts)
 * and with the answer and error cut to what one line can show. A row on screen in full (peek, reply,
 * console) and a live row are kept whole (BoardFeed.hold).
 */
import type { BoardRow } from "../engine/types.ts";
import { notOver } from "../../../runner/life/phase.mjs";

/** Characters of the answer kept: more than the widest summary column shows. */
export const SLIM_TEXT = 512;

const cut = (text: string | undefined): string | undefined =>
	text !== undefined && text.length > SLIM_TEXT ? text.slice(0, SLIM_TEXT) : text;

export function slimRow(row: BoardRow): BoardRow {
	return {
		...row,
		recentEvents: [],
		stderrTail: undefined,
		receipts: undefined,
		latestAssistant: cut(row.latestAssistant),
		error: cut(row.error),
	};
}

/** Rows kept whole anyway: what they do now changes by the second and they are few. */
export function keptWhole(row: BoardRow): boolean {
	return notOver(row) || row.state === "needs_input";
}
