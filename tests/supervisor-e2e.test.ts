/**
 * The supervisor end to end: real runners, real pi workers and a real pi supervisor run, both models
 * scripted (the supervisor's request starts with its marker, which the script matches). A rule answers in
 * place and its log line names it; the model answers or leaves it to the user with a note on the row; a
 * question that deletes goes to the user whatever the rules say; a person who answers first wins and the
 * supervisor's answer comes back rejected; the replay prints the table for 20 recorded questions.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { updatePolicy } from "../runner/life/policy.mjs";
import { readSupervisorLog } from "../runner/supervisor/supervisor-log.mjs";
import { askModel } from "../runner/supervisor/supervisor-model.mjs";
import type { BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import type { FauxRule, FauxStep } from "../test-support/faux-script.ts";
import { createTestAgent, runPi, userTexts, waitFor, type TestAgent } from "../test-support/pi-harness.ts";

const MARKER = "[agent-board supervisor request]";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

const ask = (question: string, options?: string[]): FauxStep => ({
	toolCall: { name: "ask_user", args: options ? { question, options } : { question } },
});

/** A test agent whose worker rules come first and the supervisor's (matched on the request's text) after. */
async function setup(
	workerRules: FauxRule[],
	supervisorRules: FauxRule[],
	rules: string,
	// The replay's table cuts a long rules path: a long TMPDIR must not make it cut the replay test's.
	fixture: { agentDirInHome?: boolean } = {},
): Promise<{ agent: TestAgent; board: BoardEngine }> {
	const agent = createTestAgent({
		script: {
			rules: [...supervisorRules, ...workerRules],
			fallback: [{ text: '{"decision":"ask","why":"the script has no answer for this"}' }],
		},
		agentDirInHome: fixture.agentDirInHome,
	});
	agents.push(agent);
	mkdirSync(join(agent.agentDir, "agent-board"), { recursive: true });
	writeFileSync(join(agent.agentDir, "agent-board", "rules.md"), rules);
	const board = boardFor(agent);
	await updatePolicy(board.storeDir, (policy) => (policy.supervisor = { model: "faux/faux-1" }));
	return { agent, board };
}

async function waitAsking(
	board: BoardEngine,
	id: string,
	what: (row: BoardRow) => boolean = () => true,
): Promise<BoardRow> {
	return waitFor(
		async () => {
			const row = await board.get(id);
			return row?.state === "needs_input" && what(row) ? row : undefined;
		},
		`row ${id} to ask`,
		60_000,
	);
}

const supervisorCalls = (agent: TestAgent) =>
	agent.calls().filter((call) => userTexts(call).some((text) => text.startsWith(MARKER)));
const toolResultsOf = (agent: TestAgent, pid: number) =>
	agent
		.calls()
		.filter((call) => call.pid === pid)
		.flatMap((call) => call.messages.filter((m) => m.role === "toolResult").map((m) => JSON.stringify(m.content)));

describe("the supervisor", () => {
	it("answers a routine question covered by a rule in place, and its log line names the rule", async () => {
		const { agent, board } = await setup(
			[{ match: "ROUTINE", steps: [ask("Should I continue with the refactor?"), { text: "Refactor finished." }] }],
			[],
			'# Rules for my agents\n\n## Rules\n- when question says "continue": answer "yes, continue"\n',
		);
		const row = await board.dispatch({ prompt: "ROUTINE refactor the parser", cwd: agent.cwd });
		const done = await waitDone(board, row.id, 60_000);
		expect(done).toMatchObject({
			state: "completed",
			latestAssistant: "Refactor finished.",
			currentRunId: row.currentRunId,
		});
		expect(done.receipts?.map((r) => [r.status, r.as])).toEqual([["delivered", "answer"]]);
		// In place: the same worker asked and went on with the answer as the tool's result.
		const calls = agent.calls().filter((call) => userTexts(call)[0] === "ROUTINE refactor the parser");
		expect(calls).toHaveLength(2);
		expect(calls[1]!.pid).toBe(calls[0]!.pid);
		expect(toolResultsOf(agent, calls[1]!.pid).join("")).toContain("The user answered: yes, continue");
		// The rule decided: no model was asked.
		expect(supervisorCalls(agent)).toHaveLength(0);
		const line = await waitFor(() => readSupervisorLog(board.storeDir)[0], "the supervisor's log line", 30_000);
		expect(line).toMatchObject({
			row: row.id,
			question: "Should I continue with the refactor?",
			rule: `${join(agent.agentDir, "agent-board", "rules.md")}:4`,
			decision: "answered",
			answer: "yes, continue",
		});
		expect(done.recentEvents.map((e) => e.text)).toContain(`supervisor answered: yes, continue (${line!.rule})`);
	}, 120_000);

	it("leaves what the rules do not cover to the model, which answers one and asks the user about another with its note on the row", async () => {
		const { agent, board } = await setup(
			[
				{
					match: "RUNNER-TASK",
					steps: [ask("Which test runner should I use?", ["vitest", "jest"]), { text: "Tests added." }],
				},
				{ match: "NAMING-TASK", steps: [ask("What should the new module be called?"), { text: "Module named." }] },
			],
			[
				{ match: "Which test runner should I use?", steps: [{ text: '{"decision":"answer","answer":"vitest"}' }] },
				{
					match: "What should the new module be called?",
					steps: [{ text: '{"decision":"ask","why":"naming is your call"}' }],
				},
			],
			'We use vitest.\n\n## Rules\n- when question says "deploy": ask me\n',
		);
		const answered = await board.dispatch({ prompt: "RUNNER-TASK add tests", cwd: agent.cwd });
		const named = await board.dispatch({ prompt: "NAMING-TASK split the module", cwd: agent.cwd });
		expect((await waitDone(board, answered.id, 60_000)).state).toBe("completed");
		const request = supervisorCalls(agent).find((call) =>
			userTexts(call).some((text) => text.includes("Which test runner")),
		);
		// The model was given the rules' plain words, the task and the question with its options.
		expect(userTexts(request!).join("")).toMatch(
			/We use vitest\.[\s\S]*RUNNER-TASK add tests[\s\S]*Which test runner should I use\?\nOptions:\n1\. vitest\n2\. jest/,
		);

		const asking = await waitAsking(board, named.id, (row) => row.supervisorNote !== undefined);
		expect(asking).toMatchObject({
			alive: true,
			question: "What should the new module be called?",
			supervisorNote: "asked you because: naming is your call",
		});
		// The note is the user's to read, and the user answers as always.
		expect((await board.reply(named.id, "tokenizer")).delivery).toBe("answer");
		const done = await waitDone(board, named.id, 60_000);
		expect(done).toMatchObject({ state: "completed", latestAssistant: "Module named." });
		expect(done.supervisorNote).toBeUndefined();
		const decisions = () => readSupervisorLog(board.storeDir).filter((line) => line.decision !== "you-answered");
		const log = await waitFor(
			() => (decisions().length === 2 ? decisions() : undefined),
			"both decisions in the log",
			30_000,
		);
		// The person's answer to the question left to them is logged too (it closes the breaker).
		expect(readSupervisorLog(board.storeDir).filter((line) => line.decision === "you-answered")).toMatchObject([
			{ question: "What should the new module be called?", rule: "you" },
		]);
		expect(log.map((line) => [line.question, line.rule, line.decision, line.answer ?? line.note])).toEqual(
			expect.arrayContaining([
				["Which test runner should I use?", "model", "answered", "vitest"],
				["What should the new module be called?", "model", "asked-you", "asked you because: naming is your call"],
			]),
		);
		expect(
			log.every((line) => line.model === "faux/faux-1" && typeof line.tokens === "number" && line.tokens > 0),
		).toBe(true);
	}, 120_000);

	it("never answers a question that deletes, even when a rule says yes to everything", async () => {
		const { agent, board } = await setup(
			[
				{
					match: "CLEANUP",
					steps: [ask("delete the production database?", ["yes", "no"]), { text: "unreachable" }],
				},
			],
			[],
			'## Rules\n- always: answer "yes"\n',
		);
		const row = await board.dispatch({ prompt: "CLEANUP the old tables", cwd: agent.cwd });
		const asking = await waitAsking(board, row.id, (current) => current.supervisorNote !== undefined);
		expect(asking).toMatchObject({
			alive: true,
			question: "delete the production database?",
			supervisorNote:
				"asked you because: it proposes to delete something, which is not in the safe set (never answered for you)",
		});
		expect(readSupervisorLog(board.storeDir)).toMatchObject([
			{ rule: "never: not in the safe set", decision: "asked-you" },
		]);
		expect(supervisorCalls(agent)).toHaveLength(0);
		expect((await board.stop(row.id)).state).toBe("stopped");
	}, 120_000);

	it("a person who answers first wins; the supervisor's later answer comes back rejected by the receipts", async () => {
		const { agent, board } = await setup(
			[{ match: "RACE", steps: [ask("Which cache backend?", ["sqlite", "redis"]), { text: "Cache ready." }] }],
			[],
			'## Rules\n- when question says "cache": decide\n',
		);
		const release = join(agent.root, "RELEASE-SUPERVISOR");
		const finish = join(agent.root, "RELEASE-WORKER");
		// The worker waits after the answer, so the supervisor's late answer reaches a live run.
		agent.writeScript({
			rules: [
				{
					match: MARKER,
					steps: [{ waitForFile: release, then: { text: '{"decision":"answer","answer":"redis"}' } }],
				},
				{
					match: "RACE",
					steps: [
						ask("Which cache backend?", ["sqlite", "redis"]),
						{ waitForFile: finish, then: { text: "Cache ready." } },
					],
				},
			],
		});
		const row = await board.dispatch({ prompt: "RACE set up the cache", cwd: agent.cwd });
		await waitAsking(board, row.id);
		await waitFor(() => supervisorCalls(agent).length === 1, "the supervisor model to be asked", 60_000);
		expect((await board.reply(row.id, "sqlite")).delivery).toBe("answer");
		writeFileSync(release, "");
		const line = await waitFor(() => readSupervisorLog(board.storeDir)[0], "the supervisor's decision", 60_000);
		expect(line).toMatchObject({
			decision: "answered-first",
			answer: "redis",
			rule: expect.stringContaining("rules.md:2"),
		});
		writeFileSync(finish, "");
		const done = await waitDone(board, row.id, 60_000);
		expect(done.state).toBe("completed");
		expect(done.receipts?.map((r) => [r.status, r.as ?? r.code])).toEqual([
			["delivered", "answer"],
			["rejected", "answered"],
		]);
		const worker = agent.calls().filter((call) => userTexts(call)[0] === "RACE set up the cache");
		expect(toolResultsOf(agent, worker[1]!.pid).join("")).toContain("The user answered: sqlite");
		expect(toolResultsOf(agent, worker[1]!.pid).join("")).not.toContain("redis");
	}, 120_000);

	it("replays 20 recorded questions against the rules as they are now", async () => {
		const questions = Array.from({ length: 20 }, (_, i) =>
			i % 2 === 0 ? `Should I continue with step ${i + 1}?` : `Which style for step ${i + 1}?`,
		);
		const { agent, board } = await setup(
			[{ match: "TWENTY", steps: [...questions.map((q) => ask(q)), { text: "All twenty done." }] }],
			[],
			'## Rules\n- when question says "continue": answer "yes"\n- when question says "style": answer "plain"\n',
			{ agentDirInHome: true },
		);
		const row = await board.dispatch({ prompt: "TWENTY questions", cwd: agent.cwd });
		expect((await waitDone(board, row.id, 120_000)).state).toBe("completed");
		await waitFor(() => readSupervisorLog(board.storeDir).length === 20, "20 decisions in the log", 30_000);
		// The user tunes the rules: styles now go to the model, and "continue" gets another answer.
		writeFileSync(
			join(agent.agentDir, "agent-board", "rules.md"),
			'## Rules\n- when question says "step 1?": answer "no"\n- when question says "continue": answer "yes"\n',
		);
		const replay = await runPi(agent, {
			args: ["-p", "/agent-board supervisor replay --since 1h"],
			env: { AGENT_BOARD_DIR: board.storeDir },
			timeoutMs: 60_000,
		});
		expect(replay.code, replay.stderr).toBe(0);
		const lines = replay.stdout.trim().split("\n");
		expect(lines[0]).toMatch(/^WHEN\s+ROW\s+QUESTION\s+RULES NOW\s+WAS$/);
		const body = lines.slice(1, 21);
		expect(body).toHaveLength(20);
		expect(body[0]).toMatch(
			/Should I continue with step 1\?\s+≠\s+answer "no" \(.*rules\.md:2\)\s+supervisor: "yes" \(.*rules\.md:2\)/,
		);
		expect(body[1]).toMatch(
			/Which style for step 2\?\s+the model decides \(no rule\)\s+supervisor: "plain" \(.*rules\.md:3\)/,
		);
		expect(body[2]).toMatch(/Should I continue with step 3\?\s+=\s+answer "yes"/);
		expect(lines.at(-1)).toBe(
			"20 questions: the rules answer 10 now (9 as answered, 1 differently), leave 10 to the model, ask you 0",
		);
	}, 240_000);

	it("a supervisor model that does not answer in time is a timeout in words, not an exit code", async () => {
		const agent = createTestAgent({ script: { rules: [] } });
		agents.push(agent);
		const hang = join(agent.root, "hang.mjs");
		writeFileSync(hang, "setInterval(() => {}, 1000);\n");
		const started = Date.now();
		const verdict = await askModel({
			piCommand: [process.execPath, hang],
			model: "faux/faux-1",
			request: "question",
			env: agent.env,
			cwd: agent.root,
			timeoutMs: 1000,
		});
		expect(verdict).toMatchObject({
			decision: { kind: "invalid" },
			error: "the supervisor model did not answer in 1 s",
			timedOut: true,
		});
		expect(Date.now() - started).toBeLessThan(20_000);
	}, 60_000);

	it("after a rule's answer, the worker holds `git branch -D` and `rm -r` of a tracked folder and asks the person, who says no", async () => {
		const { agent, board } = await setup(
			[
				{
					match: "GATE",
					steps: [
						ask("Should I continue with the cleanup?"),
						{ toolCall: { name: "bash", args: { command: "git branch -D x" } } },
						{ toolCall: { name: "bash", args: { command: "rm -r old" } } },
						{ toolCall: { name: "bash", args: { command: "git status --short" } } },
						{ text: "Cleanup finished." },
					],
				},
			],
			[],
			'## Rules\n- always: answer "yes"\n',
		);
		const git = (...args: string[]) =>
			execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
				cwd: agent.cwd,
				encoding: "utf8",
			});
		git("init", "-q", "-b", "main");
		mkdirSync(join(agent.cwd, "old"));
		writeFileSync(join(agent.cwd, "old", "a.txt"), "a\n");
		git("add", ".");
		git("commit", "-qm", "first");
		git("branch", "x");
		const row = await board.dispatch({ prompt: "GATE clean up the repo", cwd: agent.cwd });
		for (const command of ["git branch -D x", "rm -r old"]) {
			const held = await waitAsking(board, row.id, (current) => current.question?.includes(command) === true);
			expect(held.question).toBe(`The agent wants to run: \`${command}\`. Allow?`);
			// The supervisor never answers it: the question names a command outside the safe set.
			await waitFor(
				async () => (await board.get(row.id))?.supervisorNote?.includes("never answered for you"),
				"the supervisor's note on the held command",
				30_000,
			);
			expect((await board.reply(row.id, "no")).delivery).toBe("answer");
		}
		const done = await waitDone(board, row.id, 60_000);
		expect(done).toMatchObject({ state: "completed", latestAssistant: "Cleanup finished." });
		// The rule answered the agent's question; the person's "no" kept the branch and the folder.
		expect(readSupervisorLog(board.storeDir)[0]).toMatchObject({ decision: "answered", answer: "yes" });
		expect(git("branch", "--list", "x").trim()).toBe("x");
		expect(existsSync(join(agent.cwd, "old", "a.txt"))).toBe(true);
		const worker = agent.calls().filter((call) => userTexts(call)[0] === "GATE clean up the repo");
		const results = toolResultsOf(agent, worker.at(-1)!.pid).join("");
		expect(results).toContain("Held by the agent board: `git branch -D x`");
		expect(results).toContain("they answered: no");
		expect(results).toContain("Held by the agent board: `rm -r old`");
	}, 180_000);

	it("after the person's own answer, the same command runs without a hold", async () => {
		const { agent, board } = await setup(
			[
				{
					match: "OWN",
					steps: [
						ask("Can I remove the old folder?"),
						{ toolCall: { name: "bash", args: { command: "rm -r old" } } },
						{ text: "Removed." },
					],
				},
			],
			[],
			'## Rules\n- always: answer "yes"\n',
		);
		mkdirSync(join(agent.cwd, "old"));
		writeFileSync(join(agent.cwd, "old", "a.txt"), "a\n");
		const row = await board.dispatch({ prompt: "OWN tidy up", cwd: agent.cwd });
		// The question proposes removing something: the supervisor leaves it to the person, who says yes.
		await waitAsking(board, row.id, (current) => current.supervisorNote !== undefined);
		expect((await board.reply(row.id, "yes")).delivery).toBe("answer");
		const done = await waitDone(board, row.id, 60_000);
		expect(done).toMatchObject({ state: "completed", latestAssistant: "Removed." });
		expect(existsSync(join(agent.cwd, "old"))).toBe(false);
	}, 120_000);
});
