// The page's tools beyond the list: the row tools an opened card offers (row-tools.js), the toolbar's
// Targets and Report, and a row named in the URL (`/?row=<id>`, the link a report or a notice gives)
// opened once the board is there.
import { rowAction } from "./api.js";
import { el } from "./dom.js";
import { openReport } from "./report-view.js";
import { openBudget, openDiff, openRemoveWorktree, openRename, openTargets, openTranscript } from "./row-tools.js";

/** A "row" event (detail: its id) for each row the server pushes: open sheets follow their row. */
export const rowEvents = new EventTarget();

export function openTool(sheet, name, row, toast) {
	const fail = (e) => toast(e.message, "error");
	const tools = {
		transcript: () => openTranscript(sheet, row.id, rowEvents),
		diff: () => openDiff(sheet, row.id),
		removeWorktree: () => openRemoveWorktree(sheet, row, toast),
		rename: () => openRename(sheet, row, toast),
		budget: () => openBudget(sheet, row, toast),
		pin: async () => toast((await rowAction(row.id, "pin", { pinned: true })).message),
		unpin: async () => toast((await rowAction(row.id, "pin", { pinned: false })).message),
	};
	void Promise.resolve()
		.then(() => tools[name]?.())
		.catch(fail);
}

export function toolbarTools(toolbar, sheet, toast, reveal) {
	const fail = (e) => toast(e.message, "error");
	const open = (text, id, fn) =>
		el("button", { text, attrs: { type: "button", id }, on: { click: () => void fn().catch(fail) } });
	toolbar.append(
		open("Targets", "targets", () => openTargets(sheet)),
		open("Report", "report", () =>
			openReport(sheet, (id) => {
				sheet.hide();
				reveal(id);
			}),
		),
	);
}

let revealed = false;

/**
 * Opens the row the URL names, once (a reconnect's snapshot does not scroll the board again); `answer=1`
 * (a notifier's link to a question) puts the cursor in its answer box too.
 * @param {(id: string, answer: boolean) => void} reveal
 */
export function revealFromUrl(reveal) {
	if (revealed) return;
	revealed = true;
	const params = new URLSearchParams(location.search);
	const id = params.get("row");
	if (id) reveal(id, params.get("answer") === "1");
}
