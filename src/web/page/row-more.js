// The opened card's tools beyond reply/stop/compare/merge/archive, as the TUI's row keys: t transcript,
// d diff, w remove worktree, R rename, p pin, and a budget (`/agent-board budget`). Which apply to a
// row follows the TUI's reasons (row-disabled.ts): a diff needs a worktree, removing one a row that
// is not running.

/** The tools that apply to the row now, in the order the card shows them. */
export function moreActions(row, running) {
	return [
		row.worktree && !running ? "removeWorktree" : "",
		"rename",
		row.pinned ? "unpin" : "pin",
		row.archived ? "" : "budget",
	];
}

/** @param {() => any} current the card's row now @param {import("./row-card.js").CardContext} ctx */
export function moreButtons(current, ctx) {
	const tool = (text, name) => () => {
		const node = document.createElement("button");
		node.type = "button";
		node.textContent = text;
		node.addEventListener("click", () => ctx.openTool(name, current()));
		return node;
	};
	return {
		transcript: tool("Transcript", "transcript"),
		diff: tool("Diff", "diff"),
		removeWorktree: tool("Remove worktree", "removeWorktree"),
		rename: tool("Rename", "rename"),
		pin: tool("Pin", "pin"),
		unpin: tool("Unpin", "unpin"),
		budget: tool("Budget", "budget"),
	};
}

/** The latest answer in the details, unless the summary above already says it (no text twice). */
export function showAnswer(detail, row) {
	if (!detail.answer || row.liveText) return false;
	return detail.answer.replace(/\s+/g, " ").trim() !== row.summary;
}
