/** Plain-text board table and single-row detail for print/json/rpc mode and scripting subcommands. */
import type { BoardRow } from "../types.ts";
import { buildListItems, formatAge, formatDiff, formatUsage, rowItems } from "./view-model.ts";

function pad(text: string, width: number): string {
	return text.length >= width ? text : text + " ".repeat(width - text.length);
}

export function formatTable(rows: readonly BoardRow[], now: number, includeArchived = false): string {
	const ordered = rowItems(buildListItems(rows, { showArchived: includeArchived }));
	if (ordered.length === 0) return "No board rows.";
	const table = ordered.map((row) => [
		row.id,
		row.state,
		row.name.replace(/\s+/g, " "),
		formatAge(now - row.lastActivityAt),
		row.model ?? "",
		formatUsage(row),
		(row.state === "needs_input" && row.question ? `asks: ${row.question}` : row.summary).replace(/\s+/g, " ").slice(0, 100),
	]);
	const head = ["ID", "STATE", "NAME", "AGE", "MODEL", "USAGE", "SUMMARY"];
	const widths = head.map((h, i) => Math.min(40, Math.max(h.length, ...table.map((cells) => (cells[i] ?? "").length))));
	const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : pad(cell, widths[i] ?? 0))).join("  ").trimEnd();
	return [line(head), ...table.map(line)].join("\n");
}

export function formatDetail(row: BoardRow, now: number): string {
	const lines = [
		`id:        ${row.id}`,
		`name:      ${row.name}`,
		`state:     ${row.state}${row.alive ? " (running)" : ""}${row.archived ? " (archived)" : ""}`,
		`cwd:       ${row.cwd}`,
		`session:   ${row.sessionFile}`,
		`model:     ${row.model ?? "default"}${row.thinking ? ` thinking ${row.thinking}` : ""}`,
		`activity:  ${formatAge(now - row.lastActivityAt)} ago`,
	];
	if (row.worktreePath) lines.push(`worktree:  ${row.worktreePath}${row.branch ? ` (${row.branch})` : ""} ${formatDiff(row)}`);
	if (row.usage) lines.push(`usage:     ${formatUsage(row)}`);
	if (row.summary) lines.push(`summary:   ${row.summary}`);
	if (row.question) lines.push(`question:  ${row.question}`);
	if (row.currentTool) lines.push(`tool:      ${row.currentTool}`);
	if (row.error) lines.push(`error:     ${row.error}`);
	if (row.latestAssistant) lines.push(`latest:    ${row.latestAssistant}`);
	return lines.join("\n");
}
