/**
 * Peek: one row in full: what it is doing now (live tool, waiting, retry, compaction, with ticking
 * ages, and the newest words it streams), the question and its choices, receipts of messages sent to
 * it, the model that answered, and its latest answer as Markdown. Scrolls when it does not fit.
 */
import { budgetDetail } from "../view-model/budget-text.ts";
import { describeOverlaps } from "../engine/git/overlap.ts";
import type { BoardRow, Receipt } from "../engine/types.ts";
import {
	attemptText,
	clean,
	cleanBlock,
	formatAge,
	formatDiff,
	formatUsage,
	lastActive,
	liveActivity,
	liveTail,
	mergedText,
	shortPath,
	STATE_GLYPH,
	STATE_LABEL,
	targetOf,
	unreachableText,
} from "../view-model/row-text.ts";
import { fit } from "../view-model/ui-types.ts";
import { questionLines } from "./reply-view.ts";
import { rowActions } from "./row-actions.ts";
import { ScrollLines, scrollKeys } from "./scroll-lines.ts";
import { markdownLines, wrap } from "./text.ts";
import { STATE_COLOR } from "./theme.ts";
import { feedRow, type Host, type KeyEntry, View } from "./view.ts";

function receiptLine(receipt: Receipt, now: number): string {
	const mark = receipt.status === "delivered" ? "✓" : receipt.status === "rejected" ? "✗" : "…";
	const as = receipt.as ? ` as ${receipt.as}` : "";
	const why = receipt.reason ? ` (${clean(receipt.reason)})` : "";
	return `${mark} ${receipt.status}${as} ${formatAge(now - receipt.at)} ago${why}: ${clean(receipt.preview)}`;
}

/** The model that answered; before the first answer, the one asked for, or pi's default. */
function modelLine(row: BoardRow): string {
	const used = clean(row.modelUsed);
	const asked = clean(row.model);
	const started = row.alive || row.startedAt !== undefined;
	const model = used || asked || (started ? "pi's default" : "pi's default (not run yet)");
	const note = used && asked && used !== asked ? ` (asked for ${asked})` : "";
	return `${model}${note}${row.thinking ? ` thinking ${row.thinking}` : ""}`;
}

export function peekLines(host: Host, row: BoardRow | undefined, width: number): string[] {
	const { theme, home, attachedId, diffCache, keys } = host.deps;
	if (!row) return [fit(theme.fg("muted", "This row is gone."), width)];
	const now = host.now();
	const label = (name: string, value: string) => fit(`${theme.fg("muted", name.padEnd(10))}${value}`, width);
	const section = (title: string, color: "muted" | "accent" | "error" = "muted") =>
		fit(theme.fg(color, theme.bold(title)), width);
	const attached = row.id === attachedId ? theme.fg("accent", "  @ attached") : "";
	const out = [
		fit(
			`${theme.fg(STATE_COLOR[row.state], `${STATE_GLYPH[row.state]} ${STATE_LABEL[row.state]}`)}  ${theme.bold(clean(row.name))}  ${theme.fg("dim", row.id)}${attached}`,
			width,
		),
		label("cwd", shortPath(row.cwd, home)),
	];
	if (row.target) out.push(label("target", targetOf(row)));
	// Not failed: the run goes on there, and the row comes back when the target does.
	if (row.unreachable) out.push(label("link", theme.fg("warning", unreachableText(row))));
	// Stats first: a long worktree path must not push them off a narrow line.
	if (row.worktreePath) {
		const diff = diffCache ? diffCache.get(row) : row.diff;
		out.push(
			label(
				"worktree",
				`${formatDiff(row, diff) || "no changes"}  ${row.branch ? `${clean(row.branch)} ` : ""}${shortPath(row.worktreePath, home)}`,
			),
		);
	}
	if (row.attempt) out.push(label("attempt", attemptText(row.attempt)));
	if (row.merged) out.push(label("merged", theme.fg("success", mergedText(row.merged))));
	const overlaps = host.deps.overlaps?.of(row) ?? row.overlaps;
	if (overlaps?.length) out.push(label("overlaps", theme.fg("warning", clean(describeOverlaps(overlaps)))));
	out.push(label("model", modelLine(row)));
	const usage = formatUsage(row);
	out.push(
		label(
			"activity",
			`${formatAge(now - lastActive(row))} ago${row.alive ? " · running" : ""}${usage ? ` · ${usage}` : ""}`,
		),
	);
	const budget = budgetDetail(row);
	if (budget) out.push(label("budget", row.budget?.paused ? theme.fg("warning", budget) : budget));
	if (row.preset) out.push(label("preset", clean(row.preset)));
	const activity = liveActivity(row, now);
	if (activity) out.push(label("now", theme.fg("accent", activity)));
	else if (row.currentTool && row.alive) out.push(label("tool", clean(row.currentTool)));
	if (row.blockedReason) out.push(label("blocked", theme.fg("warning", clean(row.blockedReason))));
	if (row.state === "needs_input" && row.question) {
		out.push(...questionLines(host, row, width).map((line) => fit(line, width)));
		if (row.questionOptions?.length)
			out.push(
				fit(
					theme.fg(
						"dim",
						`  ${keys.getKeys?.("tui.input.tab").join("/") || "tab"} in the answer box (r) picks a choice`,
					),
					width,
				),
			);
	}
	if (row.live?.text) {
		out.push(section("Streaming (newest words):"));
		out.push(
			...wrap(liveTail(row.live.text), width - 2)
				.slice(-8)
				.map((line) => fit(`  ${line}`, width)),
		);
	}
	if (row.receipts && row.receipts.length > 0) {
		out.push(section("Messages:"));
		for (const receipt of row.receipts.slice(-3))
			out.push(
				fit(`  ${theme.fg(receipt.status === "rejected" ? "error" : "dim", receiptLine(receipt, now))}`, width),
			);
	}
	if (row.error) {
		out.push(section("Error:", "error"));
		out.push(...wrap(cleanBlock(row.error), width - 2).map((line) => fit(`  ${theme.fg("error", line)}`, width)));
	}
	if (row.latestAssistant && !row.live?.text) {
		out.push(section("Latest answer:"));
		out.push(
			...markdownLines(row.latestAssistant, width - 2, theme)
				.slice(-12)
				.map((line) => fit(`  ${line}`, width)),
		);
	}
	if (row.recentEvents.length > 0) {
		out.push(section("Events:"));
		for (const event of row.recentEvents.slice(-6))
			out.push(fit(`  ${theme.fg("dim", formatAge(now - event.at).padStart(4))} ${clean(event.text)}`, width));
	}
	return out;
}

export class PeekView extends View {
	override readonly retiresStatus = true;
	private readonly rowId: string;
	private readonly scroller: ScrollLines;

	private readonly release: () => void;

	constructor(host: Host, rowId: string) {
		super(host);
		this.rowId = rowId;
		// The peek shows what the feed keeps out of memory for other rows (events, receipts, the whole answer).
		this.release = host.deps.feed.hold(rowId);
		this.scroller = new ScrollLines(
			host,
			(width) => peekLines(host, this.row(), width),
			() => host.bodyRows(),
		);
		this.addChild(this.scroller);
	}

	row(): BoardRow | undefined {
		return feedRow(this.host, this.rowId);
	}

	override dispose(): void {
		this.release();
	}

	keyTable(): KeyEntry[] {
		return [
			...rowActions(this.host, () => this.row(), {
				hints: ["reply", "followUp", "stop", "open", "transcript", "diff", "compare", "merge", "archive"],
				onArchived: () => this.host.pop(this),
			}),
			...scrollKeys(this.deps.keys, this.scroller, { line: "scroll", page: "scroll a page" }, false),
			{
				keys: ["cancel", "quit"],
				help: "back to the list",
				hint: "back",
				keep: true,
				run: () => this.host.pop(this),
			},
			{ keys: "help", help: "this help", hint: "help", run: () => this.host.help(this) },
		];
	}
}
