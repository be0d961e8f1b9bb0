/**
 * `/agent-board supervisor [replay [--since <when>]]` and `/agent-board budget <id> <amount>`. Parsing is
 * pure; running reads the store (replay, status) or raises a budget through the service.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import { parseAmount } from "../../../runner/life/budget.mjs";
import { readPolicy } from "../../../runner/life/policy.mjs";
import { formatCorpus, parseCorpus } from "../../../runner/supervisor/corpus.mjs";
import { readRules, shortRulesPath } from "../../../runner/supervisor/rules-files.mjs";
import { readSupervisorLog, supervisorLogPath } from "../../../runner/supervisor/supervisor-log.mjs";
import { storePaths } from "../engine/paths.ts";
import type { BoardRow, BoardService, BudgetLimit } from "../engine/types.ts";
import { plain } from "../view-model/plain.ts";
import { budgetResultText } from "../view-model/budget-words.ts";
import { nearestProjectPath, projectTrusted } from "../engine/policy/project-trust.ts";
import { parseSince } from "../../../runner/time-words.mjs";
import { formatReplay, recordedQuestions } from "./replay.ts";
import { PROJECT_RULES, userRulesPath } from "../engine/policy/rules-paths.ts";

export type SupervisorParsed =
	| { ok: true; name: "supervisor"; replay: boolean; since?: number; corpus?: string }
	| { ok: true; name: "budget"; id: string; amount: BudgetLimit };

export function parseSupervisorCommand(
	rest: string,
	now = Date.now(),
): SupervisorParsed | { ok: false; error: string } {
	const words = rest.split(/\s+/).filter(Boolean);
	if (words.length === 0) return { ok: true, name: "supervisor", replay: false };
	if (words[0] !== "replay")
		return { ok: false, error: `supervisor takes "replay [--since <when>]" or nothing (got "${words[0]}")` };
	if (words.length === 1) return { ok: true, name: "supervisor", replay: true };
	const joined = words.slice(1).join(" ");
	const corpus = /^--corpus(?:=|\s+)(\S+)$/.exec(joined);
	if (corpus?.[1]) return { ok: true, name: "supervisor", replay: true, corpus: corpus[1] };
	const match = /^--since(?:=|\s+)(.+)$/.exec(joined);
	if (!match?.[1])
		return {
			ok: false,
			error: "replay takes --since <when> (1h, 2d, today, or a date) or --corpus <file> (labelled questions)",
		};
	const since = parseSince(match[1], now);
	if (since === undefined)
		return {
			ok: false,
			error: `--since: cannot read "${match[1]}" (use 30m, 1h, 2d, today, or a date such as 2025-05-01)`,
		};
	return { ok: true, name: "supervisor", replay: true, since };
}

export function parseBudgetCommand(rest: string): SupervisorParsed | { ok: false; error: string } {
	const [id, ...amountWords] = rest.split(/\s+/).filter(Boolean);
	if (!id) return { ok: false, error: "budget needs a row id and an amount" };
	const amount = parseAmount(amountWords.join(" "));
	if (!amount)
		return {
			ok: false,
			error: `budget needs an amount: 50k, 2M (tokens) or $2 (cost), got ${JSON.stringify(amountWords.join(" "))}`,
		};
	return { ok: true, name: "budget", id, amount };
}

/** The supervisor as it stands: on or off, which rules files apply from `cwd`, what the log holds. */
function status(storeDir: string, cwd: string, agentDir: string): string {
	const { policy, error } = readPolicy(storeDir);
	const lines = [
		error
			? `supervisor: off (${error})`
			: policy.supervisor
				? `supervisor: on, model ${plain(policy.supervisor.model)}`
				: "supervisor: off (pick its model in the board's settings, S)",
	];
	const userPath = userRulesPath(agentDir);
	const project = nearestProjectPath(cwd, PROJECT_RULES);
	lines.push("rules files (most specific first, for rows started here):");
	if (project)
		lines.push(
			`  ${shortRulesPath(project.path)}: ${projectTrusted(project.root, agentDir) ? describeRules(project.path) : "not read: the project is not trusted (pi's /trust)"}`,
		);
	lines.push(`  ${shortRulesPath(userPath)}: ${existsSync(userPath) ? describeRules(userPath) : "none yet"}`);
	// A person's answer to a question left to them is a line too (the breaker's), not a decision.
	const log = readSupervisorLog(storeDir).filter((line) => line.decision !== "you-answered");
	const answered = log.filter((line) => line.decision === "answered").length;
	const asked = log.filter((line) => line.decision === "asked-you").length;
	lines.push(
		`log: ${supervisorLogPath(storeDir)}: ${log.length} decisions (${answered} answered, ${asked} left to you)`,
	);
	return lines.join("\n");
}

function describeRules(path: string): string {
	const read = readRules([path]);
	const count = `${read.rules.length} rule${read.rules.length === 1 ? "" : "s"}`;
	return read.errors.length
		? `${count}, and errors (every question goes to you until they are fixed):\n${read.errors.map((e) => `    ${plain(e)}`).join("\n")}`
		: count;
}

export async function runSupervisorCommand(
	service: BoardService,
	parsed: SupervisorParsed,
	cwd: string,
	agentDir: string,
	resolve: (key: string) => Promise<BoardRow>,
): Promise<string> {
	if (parsed.name === "budget") {
		const row = await resolve(parsed.id);
		if (!service.budget) throw new Error("this board cannot set budgets");
		const result = await service.budget(row.id, parsed.amount);
		return budgetResultText(row.id, parsed.amount, result);
	}
	if (!parsed.replay) return status(service.storeDir, cwd, agentDir);
	if (parsed.corpus) {
		const path = resolvePath(cwd, parsed.corpus);
		return formatCorpus(parseCorpus(readFileSync(path, "utf8"), path), plain(parsed.corpus));
	}
	return formatReplay(recordedQuestions(storePaths(service.storeDir), service.storeDir, parsed.since ?? 0), agentDir);
}
