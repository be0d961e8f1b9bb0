// Compare's tools beyond merge, as the TUI's compare keys: an attempt's own diff, its diff against
// another attempt (the TUI's space then d), keep this one (k); and after a merge, the offer to
// remove the merged worktree (the TUI asks the same after y).
import { rowAction } from "./api.js";
import { el, fill } from "./dom.js";
import { openDiff, openKeep } from "./row-tools.js";

function button(text, onClick, kind = "") {
	return el("button", { class: kind, text, attrs: { type: "button" }, on: { click: onClick } });
}

const tag = (row) => (row.attempt ? `#${row.attempt.index}` : row.id);

/** Buttons of one attempt in compare; `reopen` comes back to compare. */
export function attemptTools(sheet, row, entries, running, toast, reopen) {
	const fail = (e) => toast(e.message, "error");
	const out = [];
	if (row.worktree) out.push(button("Diff", () => void openDiff(sheet, row.id, undefined, reopen).catch(fail)));
	for (const { row: other } of entries)
		if (other.id !== row.id && other.worktree && row.worktree)
			out.push(button(`Diff vs ${tag(other)}`, () => void openDiff(sheet, row.id, other.id, reopen).catch(fail)));
	if (row.attempt && !running)
		out.push(button("Keep this one", () => void openKeep(sheet, row.id, toast, reopen).catch(fail)));
	return out;
}

/** After a merge: remove the merged worktree now (git's refusal asks again before forcing), or not. */
export function removeAfterMerge(host, id, toast, done) {
	const remove = async (force) => {
		try {
			const removed = await rowAction(id, "remove-worktree", { force });
			if (removed.status === "removed") {
				toast(removed.message);
				return done();
			}
			fill(host, [
				el("p", { class: "warning", text: removed.question }),
				el("div", { class: "buttons" }, [
					button("Force-remove", () => void remove(true), "danger"),
					button("Keep it", done),
				]),
			]);
		} catch (e) {
			fill(host, [el("p", { class: "error-text", text: `not removed: ${e.message}` }), button("Done", done)]);
		}
	};
	fill(host, [
		el("p", { text: "Merged. Remove its worktree now?" }),
		el("div", { class: "buttons" }, [
			button("Remove worktree", () => void remove(false), "primary"),
			button("Keep it", done),
		]),
	]);
}
