/**
 * `/agent-board supervisor replay [--since <when>]`: the questions the store recorded (every ask_user call
 * in the runs' events, with what answered it: the supervisor's log says which answers were its own), and
 * what the rules as they are now would do with each, so a user can tune the rules before trusting them.
 * The model is not asked again: where the rules leave a question to it, the replay says so.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { decide } from "../../../runner/supervisor/decide.mjs";
import { readRules } from "../../../runner/supervisor/rules-files.mjs";
import { readSupervisorLog, type SupervisorLine } from "../../../runner/supervisor/supervisor-log.mjs";
import type { StorePaths } from "../engine/paths.ts";
import { FileCache, listRowIds, readEventsFile, readMeta, readStatus } from "../engine/store.ts";
import type { RowMeta } from "../engine/types.ts";
import { plain } from "../view-model/plain.ts";
import { loadPresets } from "../engine/policy/presets.ts";
import { rulesPaths } from "../engine/policy/rules-paths.ts";
import { clockTime } from "../view-model/row-text.ts";

export interface RecordedQuestion {
	at: number;
	meta: RowMeta;
	runId: string;
	call: string;
	question: string;
	options?: string[];
	/** The target its run ran on, when a pool placed it (`target is` names the pool or this member). */
	member?: string;
	/** What happened: answered (by whom), parked, stopped, or still waiting. */
	outcome:
		| { kind: "answered"; text: string; by: "you" | "supervisor"; rule?: string }
		| { kind: "parked" | "stopped" | "waiting" };
	/** The supervisor left it to the user, with this note. */
	note?: string;
}

const ANSWERED = "The user answered: ";

function answerOf(result: unknown): RecordedQuestion["outcome"] {
	const text = typeof result === "string" ? result : "";
	if (text.startsWith(ANSWERED)) return { kind: "answered", text: text.slice(ANSWERED.length), by: "you" };
	if (text.startsWith("The user has not answered yet")) return { kind: "parked" };
	return { kind: "stopped" };
}

/** Every ask_user question in the store's runs since `since`, oldest first. */
export function recordedQuestions(paths: StorePaths, storeDir: string, since: number): RecordedQuestion[] {
	const log = new Map<string, SupervisorLine>();
	for (const line of readSupervisorLog(storeDir, since))
		if (line.decision !== "you-answered") log.set(`${line.run}/${line.call}`, line);
	const out: RecordedQuestion[] = [];
	const cache = new FileCache();
	for (const id of listRowIds(paths)) {
		let meta: RowMeta;
		let runs: string[];
		try {
			meta = readMeta(paths, id, cache);
			runs = readdirSync(join(paths.row(id), "runs"));
		} catch {
			continue;
		}
		for (const runId of runs) {
			const runDir = paths.run(id, runId);
			let member: string | undefined;
			try {
				const status = readStatus(runDir, cache, false);
				if (status.updatedAt < since) continue;
				member = status.link?.target;
			} catch {
				continue;
			}
			const open = new Map<string, RecordedQuestion>();
			for (const event of readEventsFile(join(runDir, "events.jsonl"))) {
				if (event.toolName !== "ask_user" || typeof event.toolCallId !== "string") continue;
				if (event.type === "tool_execution_start") {
					const args = (event.args ?? {}) as { question?: unknown; options?: unknown };
					if (typeof args.question !== "string" || typeof event.at !== "number" || event.at < since) continue;
					const options = Array.isArray(args.options)
						? args.options.filter((o): o is string => typeof o === "string")
						: undefined;
					const question: RecordedQuestion = {
						at: event.at,
						meta,
						runId,
						call: event.toolCallId,
						question: args.question,
						...(options?.length ? { options } : {}),
						...(member ? { member } : {}),
						outcome: { kind: "waiting" },
					};
					open.set(event.toolCallId, question);
					out.push(question);
				} else if (event.type === "tool_execution_end") {
					const question = open.get(event.toolCallId);
					if (question) question.outcome = answerOf(event.result);
				}
			}
			for (const question of open.values()) {
				const line = log.get(`${runId}/${question.call}`);
				if (line?.decision === "answered" && question.outcome.kind === "answered")
					question.outcome = { ...question.outcome, by: "supervisor", rule: line.rule };
				if (line?.decision === "asked-you" && line.note) question.note = line.note;
			}
		}
	}
	return out.sort((a, b) => a.at - b.at);
}

/** What the rules as they are now do with one recorded question, in words. */
export function ruleNow(
	question: RecordedQuestion,
	agentDir: string,
	rulesCache: Map<string, ReturnType<typeof readRules>>,
): { text: string; answer?: string } {
	const { meta } = question;
	const preset = meta.preset
		? loadPresets(meta.cwd, agentDir).find((candidate) => candidate.name === meta.preset)
		: undefined;
	const paths = rulesPaths(meta.cwd, agentDir, preset?.rules);
	const key = paths.join("\n");
	let rules = rulesCache.get(key);
	if (!rules) {
		rules = readRules(paths);
		rulesCache.set(key, rules);
	}
	const decision = decide(
		{ question: question.question, ...(question.options ? { options: question.options } : {}) },
		rules,
		{ rowId: meta.id, rowName: meta.name, target: meta.target, member: question.member, preset: meta.preset },
	);
	if (decision.kind === "answer")
		return { text: `answer "${decision.text}" (${decision.rule})`, answer: decision.text };
	if (decision.kind === "model")
		return {
			text: decision.rule === "model" ? "the model decides (no rule)" : `the model decides (${decision.rule})`,
		};
	return { text: `ask you: ${decision.note.replace(/^asked you because: /, "")}` };
}

function wasText(question: RecordedQuestion): string {
	const outcome = question.outcome;
	if (outcome.kind === "answered")
		return outcome.by === "supervisor"
			? `supervisor: "${outcome.text}" (${outcome.rule ?? "model"})`
			: `you: "${outcome.text}"`;
	if (outcome.kind === "parked") return "parked (answered later by a new run)";
	if (outcome.kind === "stopped") return "stopped before an answer";
	return question.note ? `waiting; ${question.note}` : "still waiting";
}

const clip = (text: string, max: number): string => {
	const flat = plain(text).replace(/\s+/g, " ");
	return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** The replay's table: one line a question, then what the rules would change. */
export function formatReplay(questions: readonly RecordedQuestion[], agentDir: string): string {
	if (questions.length === 0) return "No recorded questions (ask_user calls) in that time.";
	const cache = new Map<string, ReturnType<typeof readRules>>();
	let same = 0;
	let differ = 0;
	let model = 0;
	let asks = 0;
	const rows = questions.map((question) => {
		const now = ruleNow(question, agentDir, cache);
		const was = question.outcome.kind === "answered" ? question.outcome.text : undefined;
		let mark = " ";
		if (now.answer !== undefined && was !== undefined) {
			const match = now.answer.trim().toLowerCase() === was.trim().toLowerCase();
			mark = match ? "=" : "≠";
			if (match) same++;
			else differ++;
		}
		if (now.text.startsWith("the model")) model++;
		if (now.text.startsWith("ask you")) asks++;
		const when = new Date(question.at);
		const stamp = `${String(when.getMonth() + 1).padStart(2, "0")}-${String(when.getDate()).padStart(2, "0")} ${clockTime(when.getTime())}`;
		return [
			stamp,
			clip(question.meta.id, 16),
			clip(question.question, 44),
			mark,
			clip(now.text, 72),
			clip(wasText(question), 72),
		];
	});
	const head = ["WHEN", "ROW", "QUESTION", "", "RULES NOW", "WAS"];
	const widths = head.map((h, i) => Math.max(h.length, ...rows.map((cells) => cells[i]?.length ?? 0)));
	const line = (cells: string[]) =>
		cells
			.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
			.join("  ")
			.trimEnd();
	const summary = `${questions.length} questions: the rules answer ${questions.length - model - asks} now (${same} as answered, ${differ} differently), leave ${model} to the model, ask you ${asks}`;
	return [line(head), ...rows.map(line), "", summary].join("\n");
}
