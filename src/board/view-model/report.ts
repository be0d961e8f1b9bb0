/**
 * The morning report, built from what the store holds (pure: the reading is report-read.ts): what ran
 * since a time, what finished, what failed and why, every answer the supervisor gave for the person
 * (a rule's file:line and text, or the model and its note), the questions still waiting, and the spend
 * per target, preset and day. `/agent-board report` prints it (reportText); the page shows the same.
 */
import { dayOf } from "../../../runner/life/spend-ledger.mjs";
import type { BoardRow } from "../engine/types.ts";
import { clean, formatCost, formatTokens, fullSummary, STATE_GLYPH, targetOf } from "./row-text.ts";

/** A supervisor.log line as the report reads it (runner/supervisor/supervisor-log.mjs). */
export interface ReportDecision {
	at: number;
	row: string;
	question: string;
	rule: string;
	ruleText?: string;
	decision: string;
	answer?: string;
	note?: string;
	model?: string;
}

/** A spend ledger line (runner/life/spend-ledger.mjs). */
export interface ReportSpendLine {
	at: number;
	row: string;
	target?: string;
	tokens: number;
	cost: number;
}

export interface ReportInput {
	since: number;
	now: number;
	/** Every row, archived ones too. */
	rows: readonly BoardRow[];
	decisions: readonly ReportDecision[];
	spend: readonly ReportSpendLine[];
	/** The row's link on the page, when the web view runs. */
	rowUrl?: (id: string) => string;
}

export interface ReportRow {
	id: string;
	name: string;
	state: BoardRow["state"];
	glyph: string;
	target: string;
	preset?: string;
	at: number;
	/** What it did, why it failed, or what it asks. */
	text: string;
	/** Why the supervisor left a question to the person. */
	note?: string;
	url?: string;
}

export interface ReportAnswer {
	at: number;
	row: string;
	name: string;
	question: string;
	answer: string;
	/** "rule" with the rule's file:line (and its text), or "model" with its note. */
	by: "rule" | "model";
	rule: string;
	ruleText?: string;
	note?: string;
	url?: string;
}

export interface SpendTotal {
	key: string;
	tokens: number;
	cost: number;
}

export interface Report {
	since: number;
	now: number;
	/** Every row that did something since (started, ran, ended). */
	ran: number;
	finished: ReportRow[];
	failed: ReportRow[];
	stopped: ReportRow[];
	running: ReportRow[];
	waiting: ReportRow[];
	answers: ReportAnswer[];
	spend: { target: SpendTotal[]; preset: SpendTotal[]; day: SpendTotal[]; rowsWithoutLedger: number };
}

const NO_PRESET = "(no preset)";

function reportRow(row: BoardRow, text: string, url: ReportInput["rowUrl"]): ReportRow {
	return {
		id: row.id,
		name: clean(row.name) || row.id,
		state: row.state,
		glyph: STATE_GLYPH[row.state],
		target: targetOf(row),
		...(row.preset ? { preset: clean(row.preset) } : {}),
		at: row.lastActivityAt,
		text,
		...(url ? { url: url(row.id) } : {}),
	};
}

function add(totals: Map<string, SpendTotal>, key: string, tokens: number, cost: number): void {
	const total = totals.get(key) ?? { key, tokens: 0, cost: 0 };
	total.tokens += tokens;
	total.cost += cost;
	totals.set(key, total);
}

const sorted = (totals: Map<string, SpendTotal>): SpendTotal[] =>
	[...totals.values()].sort((a, b) => b.cost - a.cost || b.tokens - a.tokens || (a.key < b.key ? -1 : 1));

export function buildReport(input: ReportInput): Report {
	const { since, now, rowUrl } = input;
	const byId = new Map(input.rows.map((row) => [row.id, row]));
	const active = input.rows.filter((row) => row.lastActivityAt >= since || row.createdAt >= since);
	const newest = (a: ReportRow, b: ReportRow) => b.at - a.at;
	const of = (state: BoardRow["state"] | BoardRow["state"][], text: (row: BoardRow) => string) =>
		active
			.filter((row) => (Array.isArray(state) ? state.includes(row.state) : row.state === state))
			.map((row) => reportRow(row, text(row), rowUrl))
			.sort(newest);
	// A question waits whenever it was asked: it is the first thing a person must see.
	const waiting = input.rows
		.filter((row) => row.state === "needs_input" && !row.archived)
		.map((row) => ({
			...reportRow(row, clean(row.question) || fullSummary(row), rowUrl),
			...(row.supervisorNote ? { note: clean(row.supervisorNote) } : {}),
		}))
		.sort(newest);
	const answers: ReportAnswer[] = input.decisions
		.filter((line) => line.decision === "answered" && line.at >= since && line.answer !== undefined)
		.map((line) => {
			const row = byId.get(line.row);
			const byModel = line.rule === "model";
			return {
				at: line.at,
				row: line.row,
				name: clean(row?.name) || line.row,
				question: clean(line.question),
				answer: clean(line.answer),
				by: byModel ? "model" : "rule",
				rule: clean(line.rule),
				...(line.ruleText ? { ruleText: clean(line.ruleText) } : {}),
				...(line.note
					? { note: clean(line.note) }
					: byModel && line.model
						? { note: `by ${clean(line.model)}` }
						: {}),
				...(rowUrl ? { url: rowUrl(line.row) } : {}),
			} satisfies ReportAnswer;
		})
		.sort((a, b) => b.at - a.at);
	const target = new Map<string, SpendTotal>();
	const preset = new Map<string, SpendTotal>();
	const day = new Map<string, SpendTotal>();
	const ledgered = new Set<string>();
	for (const line of input.spend) {
		if (line.at < since || line.at > now) continue;
		const row = byId.get(line.row);
		ledgered.add(line.row);
		add(target, line.target ?? (row ? targetOf(row) : "local"), line.tokens, line.cost);
		add(preset, row?.preset ? clean(row.preset) : NO_PRESET, line.tokens, line.cost);
		add(day, dayOf(line.at), line.tokens, line.cost);
	}
	// The ledger holds runs a budget applied to; another row counts its usage on its last day.
	let rowsWithoutLedger = 0;
	for (const row of active) {
		if (ledgered.has(row.id) || !row.usage || row.usage.totalTokens <= 0) continue;
		rowsWithoutLedger += 1;
		add(target, targetOf(row), row.usage.totalTokens, row.usage.cost);
		add(preset, row.preset ? clean(row.preset) : NO_PRESET, row.usage.totalTokens, row.usage.cost);
		add(day, dayOf(row.lastActivityAt), row.usage.totalTokens, row.usage.cost);
	}
	return {
		since,
		now,
		ran: active.length,
		finished: of("completed", (row) => fullSummary(row)),
		failed: of(["failed", "error"], (row) => clean(row.error) || fullSummary(row) || "no reason recorded"),
		stopped: of("stopped", (row) => fullSummary(row)),
		running: of(["working", "queued"], (row) => fullSummary(row)),
		waiting,
		answers,
		spend: {
			target: sorted(target),
			preset: sorted(preset),
			day: [...day.values()].sort((a, b) => (a.key < b.key ? -1 : 1)),
			rowsWithoutLedger,
		},
	};
}

function clock(at: number): string {
	const d = new Date(at);
	return `${dayOf(at)} ${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
}

function spent(total: SpendTotal): string {
	const cost = formatCost(total.cost);
	return `${formatTokens(total.tokens)} tok${cost ? ` ${cost}` : ""}`;
}

function clip(text: string, max = 160): string {
	return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}

/** The report's headline: "5 rows ran since 2026-12-05 20:00: 2 finished, 1 failed, 1 waiting for you". */
export function reportHeadline(report: Report): string {
	const parts = [
		report.finished.length ? `${report.finished.length} finished` : "",
		report.failed.length ? `${report.failed.length} failed` : "",
		report.stopped.length ? `${report.stopped.length} stopped` : "",
		report.running.length ? `${report.running.length} still running` : "",
		report.waiting.length ? `${report.waiting.length} waiting for you` : "",
		report.answers.length
			? `${report.answers.length} answer${report.answers.length === 1 ? "" : "s"} given for you`
			: "",
	].filter(Boolean);
	return `${report.ran} row${report.ran === 1 ? "" : "s"} ran since ${clock(report.since)}${parts.length ? `: ${parts.join(", ")}` : ""}`;
}

/** The answer's author: "rule rules.md:4 (when ...)" or "the model (its note)". */
export function answerBy(answer: ReportAnswer): string {
	if (answer.by === "rule") return `by rule ${answer.rule}${answer.ruleText ? ` (${clip(answer.ruleText, 80)})` : ""}`;
	return `by the model${answer.note ? ` (${answer.note})` : ""}`;
}

/** The report as `/agent-board report` prints it. */
export function reportText(report: Report): string {
	const out = [reportHeadline(report)];
	const section = (title: string, lines: string[]) => {
		if (lines.length === 0) return;
		out.push("", title, ...lines.map((line) => `  ${line}`));
	};
	const line = (row: ReportRow) =>
		`${row.glyph} ${row.id} ${row.name}: ${clip(row.text)}${row.note ? ` (${row.note})` : ""}${row.url ? `  ${row.url}` : ""}`;
	section("Waiting for you", report.waiting.map(line));
	section("Failed", report.failed.map(line));
	section("Finished", report.finished.map(line));
	section("Stopped", report.stopped.map(line));
	section("Still running", report.running.map(line));
	section(
		"Answered for you",
		report.answers.map(
			(a) =>
				`${a.row} ${a.name}: "${clip(a.question, 100)}" -> "${clip(a.answer, 60)}" ${answerBy(a)}${a.url ? `  ${a.url}` : ""}`,
		),
	);
	const spend = report.spend;
	if (spend.day.length > 0) {
		section(
			"Spend per target",
			spend.target.map((t) => `${t.key}: ${spent(t)}`),
		);
		section(
			"Spend per preset",
			spend.preset.map((t) => `${t.key}: ${spent(t)}`),
		);
		section(
			"Spend per day",
			spend.day.map((t) => `${t.key}: ${spent(t)}`),
		);
		if (spend.rowsWithoutLedger > 0)
			out.push(
				`  (${spend.rowsWithoutLedger} row${spend.rowsWithoutLedger === 1 ? "" : "s"} without a budget count their whole usage on their last day)`,
			);
	}
	return out.join("\n");
}
