/**
 * Peek: one row in full: what it is doing now (live text, current tool, waiting/retry/compaction with
 * ticking ages), the question and its choices, receipts of messages sent to it, the model that
 * actually answered, and the latest answer as Markdown. Every worker string is sanitised.
 */
import { Markdown, wrapTextWithAnsi } from "@earendil-works/pi-tui";
import { describeOverlaps } from "../overlap.ts";
import type { BoardRow, Receipt } from "../types.ts";
import { attemptText, mergedText } from "../commands/attempt-text.ts";
import type { Dashboard } from "./dashboard.ts";
import { STATE_COLOR } from "./render-list.ts";
import { clean, cleanBlock, fit, markdownTheme, type UiTheme } from "../view-model/ui-types.ts";
import { formatAge, formatDiff, formatUsage, liveLine, STATE_GLYPH, STATE_LABEL, shortPath } from "../view-model/row-text.ts";

export function wrap(text: string, width: number): string[] {
	const out: string[] = [];
	for (const line of text.split("\n")) out.push(...(line ? wrapTextWithAnsi(line, Math.max(1, width)) : [""]));
	return out;
}

/** Markdown of worker text, cached per text and width (a tick repaints peek once a second). */
const markdownCache = new Map<string, string[]>();
export function markdownLines(text: string, width: number, theme: UiTheme): string[] {
	const key = `${width}\u0000${text}`;
	const hit = markdownCache.get(key);
	if (hit) return hit;
	const lines = [...new Markdown(cleanBlock(text), 0, 0, markdownTheme(theme)).render(Math.max(1, width))];
	if (markdownCache.size > 64) markdownCache.clear();
	markdownCache.set(key, lines);
	return lines;
}

function receiptLine(receipt: Receipt, now: number): string {
	const mark = receipt.status === "delivered" ? "✓" : receipt.status === "rejected" ? "✗" : "…";
	const as = receipt.as ? ` as ${receipt.as}` : "";
	const why = receipt.reason ? ` (${clean(receipt.reason)})` : "";
	return `${mark} ${receipt.status}${as} ${formatAge(now - receipt.at)} ago${why}: ${clean(receipt.preview)}`;
}

function modelLine(row: BoardRow): string {
	const used = clean(row.modelUsed);
	const asked = clean(row.model);
	const model = used || asked || "pi's default (not run yet)";
	const note = used && asked && used !== asked ? ` (asked for ${asked})` : "";
	return `${model}${note}${row.thinking ? ` thinking ${row.thinking}` : ""}`;
}

export function peekLines(d: Dashboard, width: number, theme: UiTheme): string[] {
	const row = d.focusRow();
	if (!row) return [fit(theme.fg("muted", "This row is gone."), width)];
	const home = d.deps.home;
	const now = d.now();
	const label = (name: string, value: string) => fit(`${theme.fg("muted", name.padEnd(10))}${value}`, width);
	const attached = row.id === d.deps.attachedId ? theme.fg("accent", "  @ attached") : "";
	const out = [
		fit(`${theme.fg(STATE_COLOR[row.state], `${STATE_GLYPH[row.state]} ${STATE_LABEL[row.state]}`)}  ${theme.bold(clean(row.name))}  ${theme.fg("dim", row.id)}${attached}`, width),
		label("cwd", shortPath(row.cwd, home)),
	];
	// Stats first: a long worktree path must not push them off a narrow line.
	if (row.worktreePath) {
		const diff = d.deps.diffCache ? d.deps.diffCache.get(row) : row.diff;
		out.push(label("worktree", `${formatDiff(row, diff) || "no changes"}  ${row.branch ? `${clean(row.branch)} ` : ""}${shortPath(row.worktreePath, home)}`));
	}
	if (row.attempt) out.push(label("attempt", attemptText(row.attempt)));
	if (row.merged) out.push(label("merged", theme.fg("success", mergedText(row.merged))));
	if (row.overlaps?.length) out.push(label("overlaps", theme.fg("warning", clean(describeOverlaps(row.overlaps)))));
	out.push(label("model", modelLine(row)));
	out.push(label("activity", `${formatAge(now - row.lastActivityAt)} ago${row.alive ? " · running" : ""}${row.usage ? ` · ${formatUsage(row)}` : ""}`));
	const live = liveLine(row, now);
	if (live && live !== clean(row.live?.text)) out.push(label("now", theme.fg("accent", live)));
	else if (row.currentTool && row.alive) out.push(label("tool", clean(row.currentTool)));
	if (row.blockedReason) out.push(label("blocked", theme.fg("warning", clean(row.blockedReason))));
	if (row.state === "needs_input" && row.question) {
		out.push(fit(theme.fg("accent", theme.bold("Question:")), width));
		out.push(...wrap(cleanBlock(row.question), width - 2).map((line) => fit(`  ${line}`, width)));
		(row.questionOptions ?? []).forEach((option, i) => out.push(fit(`  ${theme.fg("accent", `${i + 1}.`)} ${clean(option)}`, width)));
		out.push(fit(theme.fg("dim", `  ${d.deps.keys.getKeys?.("tui.input.tab").join("/") || "tab"} in the answer box picks a choice`), width));
	}
	if (row.live?.text) {
		out.push(fit(theme.fg("muted", theme.bold("Streaming:")), width));
		out.push(...wrap(cleanBlock(row.live.text), width - 2).slice(-8).map((line) => fit(`  ${line}`, width)));
	}
	if (row.receipts && row.receipts.length > 0) {
		out.push(fit(theme.fg("muted", theme.bold("Messages:")), width));
		for (const receipt of row.receipts.slice(-3)) out.push(fit(`  ${theme.fg(receipt.status === "rejected" ? "error" : "dim", receiptLine(receipt, now))}`, width));
	}
	if (row.error) {
		out.push(fit(theme.fg("error", theme.bold("Error:")), width));
		out.push(...wrap(cleanBlock(row.error), width - 2).map((line) => fit(`  ${theme.fg("error", line)}`, width)));
	}
	if (row.latestAssistant && !row.live?.text) {
		out.push(fit(theme.fg("muted", theme.bold("Latest answer:")), width));
		out.push(...markdownLines(row.latestAssistant, width - 2, theme).slice(-12).map((line) => fit(`  ${line}`, width)));
	}
	if (row.recentEvents.length > 0) {
		out.push(fit(theme.fg("muted", theme.bold("Events:")), width));
		for (const event of row.recentEvents.slice(-6)) out.push(fit(`  ${theme.fg("dim", formatAge(now - event.at).padStart(4))} ${clean(event.text)}`, width));
	}
	return out;
}
