// The supervisor's cost, through the real runner, a real pi worker and a real pi supervisor run, both
// models scripted: time from the worker's question (ask_user seen by the runner) to its answer delivered
// in place, for questions a rule answers and questions the model decides; the model's tokens per
// question; and what the turn-end hold (budgets) adds between turns, without and with a budget.
// Run: node --experimental-strip-types bench/supervisor.mjs   (BENCH_RUNS questions of each kind, default 15)
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { updatePolicy } from "../runner/life/policy.mjs";
import { readSupervisorLog } from "../runner/supervisor/supervisor-log.mjs";
import { createBoardService } from "../src/board/engine/service.ts";
import { createTestAgent, PI_CLI } from "../test-support/pi-harness.ts";
import { load, spread } from "./_stats.mjs";

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const MARKER = "[agent-board supervisor request]";

/** @param {string} question */
const ask = (question) => ({ toolCall: { name: "ask_user", args: { question } } });
const questions = Array.from({ length: RUNS * 2 }, (_, i) =>
	i % 2 === 0 ? `Should I continue with step ${i}?` : `Which naming style for step ${i}?`,
);
const turns = Array.from({ length: RUNS }, (_, i) => ({ toolCall: { name: "bash", args: { command: `echo ${i}` } } }));

const agent = createTestAgent({
	script: {
		rules: [
			{ match: MARKER, steps: [{ text: '{"decision":"answer","answer":"camelCase"}' }] },
			{ match: "BENCH-QUESTIONS", steps: [...questions.map(ask), { text: "done" }] },
			{ match: "BENCH-TURNS", steps: [...turns, { text: "done" }] },
		],
	},
});
const board = createBoardService({
	storeDir: join(agent.root, "store"),
	piCommand: [process.execPath, PI_CLI],
	env: agent.env,
});

/** @param {string} id */
async function waitEnded(id) {
	for (;;) {
		const row = await board.get(id);
		if (row && !row.alive && row.state !== "queued" && row.state !== "working") return row;
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
}

/** @param {string} runDir */
const events = (runDir) =>
	readFileSync(join(runDir, "events.jsonl"), "utf8")
		.split("\n")
		.filter(Boolean)
		.map((line) => JSON.parse(line));

/** Turn end (a bash result) -> the next model request, per turn of one run. @param {string} prompt @param {string} runDir */
function turnGaps(prompt, runDir) {
	const ends = events(runDir)
		.filter((e) => e.type === "tool_execution_end" && e.toolName === "bash")
		.map((e) => e.at);
	const calls = agent
		.calls()
		.filter((call) => call.messages.some((m) => m.role === "user" && JSON.stringify(m.content).includes(prompt)))
		.map((call) => call.at);
	return ends.map((at) => (calls.find((callAt) => callAt >= at) ?? NaN) - at).filter((gap) => Number.isFinite(gap));
}

try {
	mkdirSync(join(agent.agentDir, "agent-board"), { recursive: true });
	writeFileSync(
		join(agent.agentDir, "agent-board", "rules.md"),
		'## Rules\n- when question says "continue": answer "yes"\n- when question says "naming": decide\n',
	);
	await updatePolicy(board.storeDir, (policy) => (policy.supervisor = { model: "faux/faux-1" }));

	const row = await board.dispatch({ prompt: "BENCH-QUESTIONS", cwd: agent.cwd });
	const done = await waitEnded(row.id);
	if (done.state !== "completed") throw new Error(`the question run ended ${done.state}: ${done.error ?? ""}`);
	const log = readSupervisorLog(board.storeDir);
	if (log.length !== questions.length || log.some((line) => line.decision !== "answered"))
		throw new Error(`expected ${questions.length} answers, log: ${JSON.stringify(log.slice(0, 3))}`);
	// Question -> answer in place as the runner saw them (tool start -> tool end, both its clock).
	const starts = new Map();
	/** @type {{ rule: number[], model: number[] }} */
	const inPlace = { rule: [], model: [] };
	for (const event of events(String(done.runDir))) {
		if (event.toolName !== "ask_user") continue;
		if (event.type === "tool_execution_start")
			starts.set(event.toolCallId, { at: event.at, question: event.args?.question });
		if (event.type === "tool_execution_end" && starts.has(event.toolCallId)) {
			const start = starts.get(event.toolCallId);
			(String(start.question).includes("continue") ? inPlace.rule : inPlace.model).push(event.at - start.at);
		}
	}
	const byModel = log.filter((line) => line.rule !== "model" && line.tokens !== undefined);
	const tokens = byModel.map((line) => line.tokens ?? 0);

	const plain = await board.dispatch({ prompt: "BENCH-TURNS without a budget", cwd: agent.cwd });
	const plainDone = await waitEnded(plain.id);
	const budgeted = await board.dispatch({
		prompt: "BENCH-TURNS with a budget",
		cwd: agent.cwd,
		budget: { tokens: 100_000_000 },
	});
	const budgetedDone = await waitEnded(budgeted.id);

	console.log(
		`supervisor, ${questions.length} questions in one run (${RUNS} a rule answers, ${RUNS} the model decides), ${load()}`,
	);
	console.log(`  question -> answer in place, a rule:       ${spread(inPlace.rule)}`);
	console.log(`  question -> answer in place, the model:    ${spread(inPlace.model)}`);
	console.log(
		`  supervisor model tokens per question:      ${spread(tokens, "tokens")}; cost per question ${spread(
			byModel.map((line) => line.cost ?? 0),
			"$",
		)}`,
	);
	console.log(
		`  turn end -> next model request, no budget: ${spread(turnGaps("without a budget", String(plainDone.runDir)))}`,
	);
	console.log(
		`  turn end -> next model request, a budget:  ${spread(turnGaps("with a budget", String(budgetedDone.runDir)))}`,
	);
} finally {
	agent.cleanup();
}
