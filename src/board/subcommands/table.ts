/** Plain-text board table and single-row detail for print/json/rpc mode and scripting subcommands. */
import { sanitizeText } from "../engine/sanitize.ts";
import type { BoardRow } from "../engine/types.ts";
import { buildListItems, rowItems } from "../view-model/list-model.ts";
import { formatAge, formatDiff, formatUsage, targetOf, unreachableText } from "../view-model/row-text.ts";

function pad(text: string, width: number): string {
	return text.length >= width ? text : text + " ".repeat(width - text.length);
}

/** One table cell or detail value: no escape sequence or control character reaches the terminal. */
const cell = (text: string): string => sanitizeText(text).replace(/\s+/g, " ");
/** Multi-line detail values keep their lines, indented under the label. */
const block = (text: string): string => sanitizeText(text, { multiline: true }).replace(/\n/g, "\n           ");

export function formatTable(rows: readonly BoardRow[], now: number, includeArchived = false): string {
	const ordered = rowItems(buildListItems(rows, { showArchived: includeArchived }));
	if (ordered.length === 0) return "No board rows.";
	// A board whose rows all run here prints no TARGET column (scripts reading it see no change).
	const remote = ordered.some((row) => row.target);
	const table = ordered.map((row) => [
		cell(row.id),
		cell(row.state),
		cell(row.name),
		formatAge(now - row.lastActivityAt),
		...(remote ? [targetOf(row)] : []),
		cell(row.model ?? ""),
		formatUsage(row),
		cell(
			row.state === "needs_input" && row.question
				? `asks: ${row.question}`
				: row.unreachable
					? unreachableText(row)
					: row.summary,
		).slice(0, 100),
	]);
	const head = ["ID", "STATE", "NAME", "AGE", ...(remote ? ["TARGET"] : []), "MODEL", "USAGE", "SUMMARY"];
	const widths = head.map((h, i) =>
		Math.min(40, Math.max(h.length, ...table.map((cells) => (cells[i] ?? "").length))),
	);
	const line = (cells: string[]) =>
		cells
			.map((cell, i) => (i === cells.length - 1 ? cell : pad(cell, widths[i] ?? 0)))
			.join("  ")
			.trimEnd();
	return [line(head), ...table.map(line)].join("\n");
}

export function formatDetail(row: BoardRow, now: number): string {
	const lines = [
		`id:        ${cell(row.id)}`,
		`name:      ${cell(row.name)}`,
		`state:     ${cell(row.state)}${row.alive ? " (running)" : ""}${row.archived ? " (archived)" : ""}`,
		`cwd:       ${cell(row.cwd)}`,
		`target:    ${targetOf(row)}${row.unreachable ? ` (${unreachableText(row)})` : ""}`,
		`session:   ${cell(row.sessionFile)}`,
		`model:     ${cell(row.model ?? "default")}${row.thinking ? ` thinking ${cell(row.thinking)}` : ""}`,
		`activity:  ${formatAge(now - row.lastActivityAt)} ago`,
	];
	if (row.worktreePath)
		lines.push(
			`worktree:  ${cell(row.worktreePath)}${row.branch ? ` (${cell(row.branch)})` : ""} ${formatDiff(row)}`,
		);
	if (row.usage) lines.push(`usage:     ${formatUsage(row)}`);
	if (row.summary) lines.push(`summary:   ${cell(row.summary)}`);
	if (row.question) lines.push(`question:  ${block(row.question)}`);
	if (row.currentTool) lines.push(`tool:      ${cell(row.currentTool)}`);
	if (row.error) lines.push(`error:     ${block(row.error)}`);
	if (row.latestAssistant) lines.push(`latest:    ${block(row.latestAssistant)}`);
	return lines.join("\n");
}
