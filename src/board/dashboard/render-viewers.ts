/**
 * Read-only viewers: the transcript (assistant text as Markdown), the diff (pi's renderDiff over the
 * numbered form of git's diff) and help (from the key table, so it shows the user's keys). Viewer
 * content is cached per content revision and width: the 1 s tick must not re-render Markdown.
 */
import type { ThemeColor } from "@earendil-works/pi-coding-agent";
import type { Dashboard } from "./dashboard.ts";
import { toNumberedDiff } from "../view-model/diff.ts";
import { HELP, helpKey } from "./key-table.ts";
import { markdownLines, wrap } from "./render-peek.ts";
import type { TranscriptEntry } from "../view-model/transcript.ts";
import { cleanBlock, fit, type UiTheme } from "../view-model/ui-types.ts";

const ROLE_STYLE: Record<TranscriptEntry["role"], { label: string; color: ThemeColor }> = {
	user: { label: "you", color: "accent" },
	assistant: { label: "agent", color: "success" },
	tool: { label: "tool", color: "muted" },
	error: { label: "error", color: "error" },
	info: { label: "info", color: "dim" },
};

const contentCache = new WeakMap<Dashboard, { key: string; lines: string[] }>();

function transcriptContent(d: Dashboard, width: number, theme: UiTheme): string[] {
	const out: string[] = [];
	for (const entry of d.transcript) {
		const style = ROLE_STYLE[entry.role];
		const body = entry.role === "assistant" ? markdownLines(entry.text, width - 7, theme) : wrap(entry.text, width - 7);
		body.forEach((line, i) => out.push(fit(`${i === 0 ? theme.fg(style.color, style.label.padEnd(6)) : "      "} ${line}`, width)));
	}
	return out;
}

function diffContent(d: Dashboard, width: number, theme: UiTheme): string[] {
	const numbered = toNumberedDiff(d.diffLines.map((line) => cleanBlock(line).replace(/\n/g, " ")));
	const render = d.deps.renderDiff;
	if (render) return render(numbered.join("\n")).split("\n").map((line) => fit(line, width));
	return numbered.map((line) => {
		const color: ThemeColor = line.startsWith("+") ? "toolDiffAdded" : line.startsWith("-") ? "toolDiffRemoved" : "toolDiffContext";
		return fit(theme.fg(color, line), width);
	});
}

export function viewerLines(d: Dashboard, width: number, theme: UiTheme, body: number): string[] {
	const row = d.focusRow();
	const title = d.mode === "diff" && d.attemptDiff ? `Diff: ${d.attemptDiff.title}` : `${d.mode === "transcript" ? "Transcript" : "Diff"}: ${row?.name ?? "(gone)"}`;
	const key = `${d.mode}:${width}:${d.viewerRevision}`;
	let cached = contentCache.get(d);
	if (!cached || cached.key !== key) {
		cached = { key, lines: d.mode === "transcript" ? transcriptContent(d, width, theme) : diffContent(d, width, theme) };
		contentCache.set(d, cached);
	}
	const content = cached.lines;
	const room = body - 1;
	const start = d.viewer.clamp(content.length, room);
	const position = content.length > room ? ` ${start + 1}-${Math.min(content.length, start + room)}/${content.length}` : "";
	return [fit(`${theme.bold(title)}${theme.fg("dim", position)}`, width), ...content.slice(start, start + room)];
}

export function helpLines(d: Dashboard, width: number, theme: UiTheme): string[] {
	const out = [fit(theme.bold("Keys (any key closes help)"), width)];
	for (const [entry, what] of HELP) out.push(fit(`  ${theme.fg("accent", helpKey(d.deps.keys, entry).padEnd(14))}${what}`, width));
	return out;
}
