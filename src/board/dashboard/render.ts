/**
 * The dashboard frame: header, the current view, the dialog line, status and the key hints. Every
 * returned line is fitted to the width, so the component is safe from 40 to 300 columns whatever the
 * rows contain. Views are in render-list.ts, render-peek.ts and render-viewers.ts.
 */
import { visibleWidth } from "@earendil-works/pi-tui";
import type { Dashboard } from "./dashboard.ts";
import { type Action, hintLine } from "./key-table.ts";
import { listLines } from "./render-list.ts";
import { peekLines } from "./render-peek.ts";
import { helpLines, viewerLines } from "./render-viewers.ts";
import { fit, type UiTheme } from "../view-model/ui-types.ts";
import { countRows } from "../presence/presence.ts";

export function renderDashboard(d: Dashboard, width: number): string[] {
	const theme = d.deps.theme;
	const height = Math.max(8, d.deps.height() - 4);
	const dialog = d.mode === "filter" || d.mode === "reply" || d.mode === "rename" || d.mode === "confirm";
	const dialogLines = dialog ? dialogBlock(d, width, theme) : [];
	const body = Math.max(3, height - 3 - dialogLines.length);
	const lines: string[] = [header(d, width, theme)];
	// Dialogs draw under the view they were opened from (list or peek).
	const base = dialog ? d.back : d.mode;
	switch (base) {
		case "peek":
			lines.push(...peekLines(d, width, theme).slice(0, body));
			break;
		case "transcript":
		case "diff":
			lines.push(...viewerLines(d, width, theme, body));
			break;
		case "dispatch":
			lines.push(...(d.form ? d.form.render(width, theme) : []));
			break;
		case "compare":
			lines.push(...(d.compare ? d.compare.render(width) : []).slice(0, body));
			break;
		case "settings":
			lines.push(fit(theme.fg("accent", theme.bold("Board settings")), width), ...(d.settingsList?.render(width) ?? []).map((line) => fit(line, width)));
			break;
		case "help":
			lines.push(...helpLines(d, width, theme).slice(0, body));
			break;
		default:
			lines.push(...listLines(d, width, theme, body));
	}
	lines.push(...dialogLines);
	lines.push(fit(d.status ? theme.fg("muted", d.status) : "", width));
	lines.push(fit(theme.fg("dim", hintLine(d.deps.keys, hints(d), width)), width));
	// Safety net: only lines that are too wide pay for a styled truncation.
	return lines.map((line) => (visibleWidth(line) > width ? fit(line, width) : line));
}

function header(d: Dashboard, width: number, theme: UiTheme): string {
	const counts = countRows(d.rows);
	const parts = [`${counts.rows} rows`, `${counts.running} running`, `${counts.waiting} need input`];
	if (d.showArchived) parts.push(`showing ${counts.archived} archived`);
	if (d.filter) parts.push(`filter: ${d.filter}`);
	if (d.deps.attachedId) parts.push(`attached: ${d.deps.feed.row(d.deps.attachedId)?.name ?? d.deps.attachedId}`);
	return fit(`${theme.fg("accent", theme.bold("Agent board"))} ${theme.fg("muted", parts.join(" · "))}`, width);
}

function dialogBlock(d: Dashboard, width: number, theme: UiTheme): string[] {
	if (d.mode === "confirm") return d.confirm ? [fit(theme.fg("warning", `(y/n) ${d.confirm.message}`), width)] : [];
	const state = d.dialog;
	if (!state) return [];
	const row = state.rowId ? d.deps.feed.row(state.rowId) : undefined;
	let label = d.mode === "filter" ? "Filter (text, s:<state>)" : d.mode === "rename" ? "Rename" : `Reply to ${row?.name ?? "?"}`;
	if (d.mode === "reply" && row) {
		if (row.state === "needs_input") label = `Answer ${row.name}`;
		else if (row.alive) label = state.followUp ? `Follow-up for ${row.name} (after its current turn)` : `Steer ${row.name} (delivered now)`;
		else label = `Reply to ${row.name} (starts a new run)`;
	}
	const out = [fit(theme.fg("accent", label), width)];
	const options = d.mode === "reply" && row?.state === "needs_input" ? (row.questionOptions ?? []) : [];
	if (options.length > 0) out.push(fit(theme.fg("muted", `choices (tab): ${options.map((o, i) => (i === state.choice ? `[${o}]` : o)).join(" · ")}`), width));
	// Leave room for the view above: the editor shows at most a third of the screen.
	const editorLines = state.editor.render(width);
	const room = Math.max(3, Math.floor(d.deps.height() / 3));
	out.push(...editorLines.slice(Math.max(0, editorLines.length - room)));
	return out;
}

function hints(d: Dashboard): ReadonlyArray<readonly [Action, string]> {
	switch (d.mode) {
		case "peek":
			return [["reply", "reply"], ["followUp", "follow-up"], ["stop", "stop"], ["transcript", "transcript"], ["diff", "diff"], ["compare", "compare"], ["merge", "merge"], ["attach", "attach"], ["archive", "archive"], ["cancel", "back"], ["help", "help"]];
		case "transcript":
		case "diff":
			return [["up", "scroll"], ["pageDown", "page"], ["top", "top"], ["end", "end"], ["cancel", "back"], ["help", "help"]];
		case "confirm":
			return [["yes", "confirm"], ["no", "cancel"]];
		case "compare":
			return [["up", "select"], ["mark", "mark"], ["diff", "diff marked vs selected"], ["merge", "merge"], ["cancel", "back"], ["help", "help"]];
		case "reply":
			return [["submit", "send"], ["newLine", "new line"], ["cancel", "cancel"]];
		case "filter":
		case "rename":
			return [["submit", "ok"], ["cancel", "cancel"]];
		case "dispatch":
			return d.form?.stage === "prompt" ? [["submit", "next"], ["newLine", "new line"], ["cancel", "cancel"]] : [["confirm", "change"], ["cancel", "cancel"]];
		case "settings":
			return [["confirm", "toggle"], ["cancel", "back"]];
		case "help":
			return [];
		default: {
			const list: [Action, string][] = [["dispatch", "new"], ["confirm", "peek"], ["reply", "reply"], ["stop", "stop"], ["attach", "attach"], ["filter", "filter"], ["archive", "archive"]];
			if (d.deps.canGoBack) list.unshift(["back", "back to your session"]);
			list.push(["quit", "quit"], ["help", "help"]);
			return list;
		}
	}
}
