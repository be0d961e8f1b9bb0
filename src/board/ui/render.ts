/**
 * Drawing for every dashboard mode. Every returned line is fitted to the width, so the component
 * is safe from 40 to 300 columns whatever the row names contain.
 */
import { visibleWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import type { BoardRow } from "../types.ts";
import type { Dashboard } from "./dashboard.ts";
import { HELP_KEYS } from "./keys.ts";
import type { TranscriptEntry } from "./transcript.ts";
import { fit, type UiTheme } from "./ui-types.ts";
import { formatAge, formatDiff, formatRowLine, formatUsage, rowLineParts, STATE_GLYPH, STATE_LABEL, shortPath } from "./view-model.ts";
import type { ThemeColor } from "@earendil-works/pi-coding-agent";

const STATE_COLOR: Record<BoardRow["state"], ThemeColor> = {
	needs_input: "warning",
	working: "accent",
	queued: "muted",
	failed: "error",
	error: "error",
	stopped: "muted",
	completed: "success",
	idle: "dim",
};

export function renderDashboard(d: Dashboard, width: number): string[] {
	const theme = d.deps.theme;
	const height = Math.max(8, d.deps.height() - 4);
	const body = Math.max(3, height - 3);
	const lines: string[] = [header(d, width, theme)];
	const dialog = d.mode === "filter" || d.mode === "reply" || d.mode === "rename" || d.mode === "confirm";
	// Dialogs draw over the view they were opened from (list or peek).
	const base = dialog ? d.back : d.mode;
	switch (base) {
		case "peek":
			lines.push(...window(peekLines(d, width, theme), body - 1, 0));
			break;
		case "transcript":
		case "diff":
			lines.push(...viewer(d, width, theme, body));
			break;
		case "dispatch":
			lines.push(...(d.form ? d.form.render(width, theme) : []));
			break;
		case "help":
			lines.push(...window(helpLines(width, theme), body, 0));
			break;
		default:
			lines.push(...listLines(d, width, theme, dialog ? body - 1 : body));
	}
	if (d.mode === "filter" || d.mode === "reply" || d.mode === "rename") lines.push(dialogLine(d, width, theme));
	if (d.mode === "confirm" && d.confirm) lines.push(fit(theme.fg("warning", `(y/n) ${d.confirm.message}`), width));
	lines.push(fit(d.status ? theme.fg("muted", d.status) : "", width));
	lines.push(fit(theme.fg("dim", hints(d)), width));
	// Safety net: only lines that are too wide pay for a styled truncation.
	return lines.map((line) => (visibleWidth(line) > width ? fit(line, width) : line));
}

function header(d: Dashboard, width: number, theme: UiTheme): string {
	const waiting = d.rows.filter((row) => !row.archived && row.state === "needs_input").length;
	const running = d.rows.filter((row) => !row.archived && row.alive).length;
	const archived = d.rows.filter((row) => row.archived).length;
	const parts = [`${d.rows.length - archived} rows`, `${running} running`, `${waiting} need input`];
	if (d.showArchived) parts.push(`showing ${archived} archived`);
	if (d.filter) parts.push(`filter: ${d.filter}`);
	return fit(`${theme.fg("accent", theme.bold("Agent board"))} ${theme.fg("muted", parts.join(" · "))}`, width);
}

function listLines(d: Dashboard, width: number, theme: UiTheme, body: number): string[] {
	if (d.visibleRows.length === 0) {
		const why = d.filter ? "No rows match the filter (esc clears it)." : "No agents yet. Press n to dispatch one.";
		return [fit(theme.fg("muted", why), width)];
	}
	const now = d.now();
	const selectedId = d.selectedRow()?.id;
	// Items map one-to-one to lines: place the window first, then format only the visible lines
	// (formatting all 500 rows per keypress would blow the frame budget).
	const selectedLine = Math.max(0, d.items.findIndex((item) => item.kind === "row" && item.row.id === selectedId));
	if (selectedLine < d.scroll + 1) d.scroll = Math.max(0, selectedLine - 1);
	if (selectedLine >= d.scroll + body) d.scroll = selectedLine - body + 1;
	d.scroll = Math.max(0, Math.min(d.scroll, Math.max(0, d.items.length - body)));
	const out: string[] = [];
	for (const item of d.items.slice(d.scroll, d.scroll + body)) {
		if (item.kind === "header") {
			out.push(fit(theme.fg("muted", theme.bold(`${item.label} (${item.count})`)), width));
			continue;
		}
		const row = item.row;
		const selected = row.id === selectedId;
		const parts = formatRowLine(rowLineParts(row, now, d.deps.home), width - 1, d.layout);
		const pointer = selected ? theme.fg("accent", ">") : " ";
		const head = theme.fg(STATE_COLOR[row.state], parts.head);
		const name = selected ? theme.bold(parts.name) : parts.name;
		// formatRowLine already fitted the plain parts to width - 1; styling adds no columns.
		out.push(`${pointer}${head}${name}${theme.fg("muted", parts.summary)}${theme.fg("dim", parts.right)}`);
	}
	return out;
}

function dialogLine(d: Dashboard, width: number, theme: UiTheme): string {
	const label = d.mode === "filter" ? "Filter (text, s:<state>): " : d.mode === "reply" ? "Reply: " : "Rename: ";
	const inner = Math.max(1, width - visibleWidth(label));
	return fit(`${theme.fg("accent", label)}${d.input.render(inner)[0] ?? ""}`, width);
}

function wrap(text: string, width: number): string[] {
	const out: string[] = [];
	for (const line of text.split("\n")) out.push(...(line ? wrapTextWithAnsi(line, Math.max(1, width)) : [""]));
	return out;
}

function peekLines(d: Dashboard, width: number, theme: UiTheme): string[] {
	const row = d.focusRow();
	if (!row) return [fit(theme.fg("muted", "This row is gone."), width)];
	const home = d.deps.home;
	const label = (name: string, value: string) => fit(`${theme.fg("muted", name.padEnd(10))}${value}`, width);
	const out = [
		fit(`${theme.fg(STATE_COLOR[row.state], `${STATE_GLYPH[row.state]} ${STATE_LABEL[row.state]}`)}  ${theme.bold(row.name)}  ${theme.fg("dim", row.id)}`, width),
		label("cwd", shortPath(row.cwd, home)),
	];
	// Stats first: a long worktree path must not push them off a narrow line.
	if (row.worktreePath) out.push(label("worktree", `${formatDiff(row) || "no changes"}  ${row.branch ? `${row.branch} ` : ""}${shortPath(row.worktreePath, home)}`));
	out.push(label("model", `${row.model ?? "default"}${row.thinking ? ` thinking ${row.thinking}` : ""}`));
	out.push(label("activity", `${formatAge(d.now() - row.lastActivityAt)} ago${row.alive ? " · running" : ""}${row.usage ? ` · ${formatUsage(row)}` : ""}`));
	if (row.summary) out.push(label("summary", row.summary.replace(/\s+/g, " ")));
	if (row.state === "needs_input" && row.question) {
		out.push(fit(theme.fg("warning", theme.bold("Question:")), width));
		out.push(...wrap(row.question, width - 2).map((line) => fit(`  ${line}`, width)));
	}
	if (row.currentTool) out.push(label("tool", row.currentTool));
	if (row.error) {
		out.push(fit(theme.fg("error", theme.bold("Error:")), width));
		out.push(...wrap(row.error, width - 2).map((line) => fit(`  ${theme.fg("error", line)}`, width)));
	}
	if (row.latestAssistant) {
		out.push(fit(theme.fg("muted", theme.bold("Latest:")), width));
		out.push(...wrap(row.latestAssistant, width - 2).slice(-8).map((line) => fit(`  ${line}`, width)));
	}
	if (row.recentEvents.length > 0) {
		out.push(fit(theme.fg("muted", theme.bold("Events:")), width));
		for (const event of row.recentEvents.slice(-6)) out.push(fit(`  ${theme.fg("dim", formatAge(d.now() - event.at).padStart(4))} ${event.text.replace(/\s+/g, " ")}`, width));
	}
	return out;
}

const ROLE_STYLE: Record<TranscriptEntry["role"], { label: string; color: ThemeColor }> = {
	user: { label: "you", color: "accent" },
	assistant: { label: "agent", color: "success" },
	tool: { label: "tool", color: "muted" },
	error: { label: "error", color: "error" },
	info: { label: "info", color: "dim" },
};

function viewer(d: Dashboard, width: number, theme: UiTheme, body: number): string[] {
	const row = d.focusRow();
	const title = `${d.mode === "transcript" ? "Transcript" : "Diff"}: ${row?.name ?? "(gone)"}`;
	let content: string[];
	if (d.mode === "transcript") {
		content = [];
		for (const entry of d.transcript) {
			const style = ROLE_STYLE[entry.role];
			const wrapped = wrap(entry.text, width - 7);
			wrapped.forEach((line, i) => content.push(fit(`${i === 0 ? theme.fg(style.color, style.label.padEnd(6)) : "      "} ${line}`, width)));
		}
	} else {
		content = d.diffLines.map((line) => {
			const color: ThemeColor = line.startsWith("+") ? "toolDiffAdded" : line.startsWith("-") ? "toolDiffRemoved" : line.startsWith("@@") ? "accent" : "toolDiffContext";
			return fit(theme.fg(color, line.replace(/\t/g, "    ")), width);
		});
	}
	const room = body - 1;
	const start = d.viewer.clamp(content.length, room);
	const position = content.length > room ? ` ${start + 1}-${Math.min(content.length, start + room)}/${content.length}` : "";
	return [fit(`${theme.bold(title)}${theme.fg("dim", position)}`, width), ...content.slice(start, start + room)];
}

function helpLines(width: number, theme: UiTheme): string[] {
	const out = [fit(theme.bold("Keys (any key closes help)"), width)];
	for (const [key, what] of HELP_KEYS) out.push(fit(`  ${theme.fg("accent", key.padEnd(12))}${what}`, width));
	return out;
}

function window(lines: string[], body: number, start: number): string[] {
	return lines.slice(start, start + body);
}

function hints(d: Dashboard): string {
	switch (d.mode) {
		case "peek":
			return "r reply  s stop  t transcript  d diff  o attach  a archive  esc back  ? help";
		case "transcript":
		case "diff":
			return "up/down scroll  pgup/pgdn page  g/G top/end  esc back";
		case "confirm":
			return "y confirm  n cancel";
		case "filter":
		case "reply":
		case "rename":
			return "enter ok  esc cancel";
		case "dispatch":
		case "help":
			return "";
		default:
			return "n new  enter peek  r reply  s stop  a archive  / filter  o attach  ? help  q quit";
	}
}
