/**
 * Talking to running agents, end to end with the real runner, the real pi and the scripted model:
 * steer and follow-up into the same worker process, ask_user answered in place, parking, live text,
 * stall and retry shown, and the bad inputs of a reply.
 */
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createBoardService } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { boardFor, readEvents, waitDone } from "../test-support/board-helpers.ts";
import {
	createTestAgent,
	PI_CLI,
	REPO_ROOT,
	runPi,
	userTexts,
	waitFor,
	type TestAgent,
} from "../test-support/pi-harness.ts";
import { storeWorkers } from "../test-support/proc-scan.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

function agentWith(options: Parameters<typeof createTestAgent>[0]): TestAgent {
	const agent = createTestAgent(options);
	agents.push(agent);
	return agent;
}

const callsWith = (agent: TestAgent, text: string) =>
	agent.calls().filter((call) => userTexts(call).some((t) => t.includes(text)));
const toolResults = (agent: TestAgent, pid: number) =>
	agent
		.calls()
		.filter((call) => call.pid === pid)
		.flatMap((call) => call.messages.filter((m) => m.role === "toolResult").map((m) => JSON.stringify(m.content)));

const LONG_WORDS = Array.from({ length: 60 }, (_, n) => `word${n}`).join(" ");

describe("talking to running agents", () => {
	it("steers a worker inside a long tool call and queues a follow-up, in the same process, with receipts", async () => {
		const agent = agentWith({
			script: {
				rules: [
					{ match: "STEER-NOW", steps: [{ text: "Steered: switching to plan B." }] },
					{ match: "FOLLOW-NEXT", steps: [{ text: "Follow-up answered." }] },
					{
						match: "LONG-TOOL",
						steps: [
							{ toolCall: { name: "bash", args: { command: "while [ ! -e RELEASE ]; do sleep 0.1; done" } } },
							{ text: "Plan A finished." },
						],
					},
				],
			},
		});
		const board = boardFor(agent);
		const row = await board.dispatch({ prompt: "LONG-TOOL task", cwd: agent.cwd });
		await waitFor(async () => (await board.get(row.id))?.live?.tool?.name === "bash", "the bash tool to run", 30_000);
		// Through the command a user or script types, from another pi process.
		const command = (args: string) =>
			runPi(agent, { args: ["-p", `/agent-board reply ${args}`], env: { AGENT_BOARD_DIR: board.storeDir } });
		const steer = await command(`${row.id} STEER-NOW use plan B`);
		expect(steer.stdout).toContain(`${row.id}: steered into the running agent (delivered)`);
		const followUp = await command(`${row.id} --follow-up FOLLOW-NEXT one more thing`);
		expect(followUp.stdout).toContain(`${row.id}: queued as a follow-up after the current turn (delivered)`);
		// Both arrived while the tool still ran; now let it finish.
		expect((await board.get(row.id))?.live?.tool?.name).toBe("bash");
		writeFileSync(join(agent.cwd, "RELEASE"), "");

		const done = await waitDone(board, row.id);
		expect(done.state).toBe("completed");
		expect(done.currentRunId).toBe(row.currentRunId);
		expect(done.latestAssistant).toBe("Follow-up answered.");
		expect(done.receipts?.map((r) => [r.status, r.as])).toEqual([
			["delivered", "steer"],
			["delivered", "followUp"],
		]);
		// One worker process served the task, the steer and the follow-up.
		const pids = new Set(
			[...callsWith(agent, "LONG-TOOL"), ...callsWith(agent, "STEER-NOW"), ...callsWith(agent, "FOLLOW-NEXT")].map(
				(c) => c.pid,
			),
		);
		expect(pids.size).toBe(1);
		const steerCall = callsWith(agent, "STEER-NOW")[0]!;
		expect(userTexts(steerCall)).toEqual(["LONG-TOOL task", "STEER-NOW use plan B"]);
		// The follow-up waited for the turn the steer started to finish.
		const followCall = callsWith(agent, "FOLLOW-NEXT")[0]!;
		expect(JSON.stringify(followCall.messages)).toContain("Steered: switching to plan B.");
	}, 120_000);

	it("ask_user waits in place and the answer is the tool result; after the wait limit it parks and a later answer resumes", async () => {
		const agent = agentWith({
			script: {
				rules: [
					{
						match: "ASK-DB",
						steps: [
							{
								toolCall: {
									name: "ask_user",
									args: { question: "Which database?", options: ["pg", "sqlite"] },
								},
							},
							{ text: "Using the answer now." },
						],
					},
					{
						match: "ASK-PARK",
						steps: [
							{ toolCall: { name: "ask_user", args: { question: "Deploy where?" } } },
							{ text: "unreachable" },
						],
					},
				],
				fallback: [{ text: "Resumed with the answer." }],
			},
		});
		const board = boardFor(agent);
		const row = await board.dispatch({ prompt: "ASK-DB set up the cache", cwd: agent.cwd });
		const asking = await waitFor(
			async () => {
				const current = await board.get(row.id);
				return current?.state === "needs_input" ? current : undefined;
			},
			"the question",
			30_000,
		);
		expect(asking).toMatchObject({ alive: true, question: "Which database?", questionOptions: ["pg", "sqlite"] });
		const answered = await board.reply(row.id, "sqlite");
		expect(answered.delivery).toBe("answer");
		const done = await waitDone(board, row.id);
		expect(done).toMatchObject({
			state: "completed",
			latestAssistant: "Using the answer now.",
			currentRunId: row.currentRunId,
		});
		const calls = callsWith(agent, "ASK-DB");
		expect(calls).toHaveLength(2);
		expect(calls[0]!.pid).toBe(calls[1]!.pid);
		expect(toolResults(agent, calls[1]!.pid).join("")).toContain("sqlite");

		const parking = createBoardService({
			storeDir: join(agent.root, "store-park"),
			piCommand: [process.execPath, PI_CLI],
			env: { ...agent.env, AGENT_BOARD_ASK_WAIT: "1" },
		});
		const parked = await parking.dispatch({ prompt: "ASK-PARK ship it", cwd: agent.cwd });
		const parkedRow = await waitFor(
			async () => {
				const current = await parking.get(parked.id);
				return current && !current.alive && current.state === "needs_input" ? current : undefined;
			},
			"the run to park",
			30_000,
		);
		expect(parkedRow.question).toBe("Deploy where?");
		const resumed = await parking.reply(parked.id, "staging");
		expect(resumed.delivery).toBe("new-run");
		const after = await waitDone(parking, parked.id);
		expect(after.state).toBe("completed");
		const last = agent.calls().at(-1)!;
		expect(userTexts(last)).toEqual(["ASK-PARK ship it", "staging"]);
	}, 120_000);

	it("shows streamed words before the message ends, a stalled model as waiting, and a retry as retrying", async () => {
		const agent = agentWith({
			script: {
				rules: [
					{ match: "STREAM", steps: [{ text: `Start ${LONG_WORDS} end.` }] },
					{ match: "STALL", steps: [{ stall: true }] },
				],
				fallback: [{ text: "ok" }],
			},
			settings: { retry: { enabled: true, maxRetries: 2, baseDelayMs: 2500 } },
		});
		const board = boardFor(agent, { stopGraceMs: 1000 });
		const streaming = await board.dispatch({ prompt: "STREAM please", cwd: agent.cwd, model: "faux-slow/slow-1" });
		const midway = await waitFor(
			async () => {
				const current = await board.get(streaming.id);
				return current?.alive && current.live?.text?.includes("word") ? current : undefined;
			},
			"streamed words in the status",
			40_000,
		);
		expect(midway.live?.text).toMatch(/^Start word0/);
		expect(midway.summary).toContain("word");
		expect((await waitDone(board, streaming.id, 60_000)).latestAssistant).toMatch(/^Start word0 word1/);

		const stalled = await board.dispatch({ prompt: "STALL here", cwd: agent.cwd });
		const waiting = await waitFor(
			async () => {
				const current = await board.get(stalled.id);
				return current?.live?.waitingSince ? current : undefined;
			},
			"the stalled request to show as waiting",
			30_000,
		);
		expect(waiting.summary).toBe("Waiting for the model");
		const stopped = await board.stop(stalled.id);
		expect(stopped.state).toBe("stopped");
		// Stop asked the worker to abort: pi itself settled the run as aborted.
		expect(readEvents(stopped.runDir!).some((e) => e.type === "agent_settled" && e.aborted === true)).toBe(true);

		copyFileSync(
			join(REPO_ROOT, "test-support/faux-transient-error-extension.ts"),
			join(agent.agentDir, "extensions", "transient.ts"),
		);
		writeFileSync(
			join(agent.agentDir, "faux-script-after-error.json"),
			JSON.stringify({ rules: [], fallback: [{ text: "Recovered after retry." }] }),
		);
		agent.writeScript({ rules: [], fallback: [{ error: "529 overloaded" }] });
		const retrying = await board.dispatch({ prompt: "flaky provider", cwd: agent.cwd });
		const seen = await waitFor(
			async () => {
				const current = await board.get(retrying.id);
				return current?.live?.retry ? current : undefined;
			},
			"the retry to show",
			30_000,
		);
		expect(seen.summary).toMatch(/^Retrying 1\/2: .*529 overloaded/);
		expect((await waitDone(board, retrying.id)).latestAssistant).toBe("Recovered after retry.");
	}, 150_000);

	it("answers bad replies clearly and never starts two workers on one session", async () => {
		const agent = agentWith({ script: { rules: [], fallback: [{ delayMs: 400, then: { text: "Done here." } }] } });
		const board = boardFor(agent);
		const row = await board.dispatch({ prompt: "first task", cwd: agent.cwd });
		await waitDone(board, row.id);
		await expect(board.reply("no-such-row", "hi")).rejects.toThrow(/no such row/);
		await expect(board.reply(row.id, "  \n ")).rejects.toThrow(/non-empty/);
		await board.archive(row.id);
		await expect(board.reply(row.id, "hi")).rejects.toThrow(/archived/);
		await board.unarchive(row.id);

		let maxWorkers = 0;
		let sampling = true;
		const sessionWorkers = () => storeWorkers(board.storeDir).filter((p) => p.argv.includes(row.sessionFile)).length;
		const sampler = (async () => {
			while (sampling) {
				maxWorkers = Math.max(maxWorkers, sessionWorkers());
				await new Promise((r) => setTimeout(r, 5));
			}
		})();
		const [a, b] = await Promise.all([board.reply(row.id, "REPLY-A please"), board.reply(row.id, "REPLY-B please")]);
		const deliveries = [a.delivery, b.delivery].sort();
		expect(deliveries.filter((d) => d === "new-run")).toHaveLength(1);
		const done: BoardRow = await waitFor(
			async () => {
				const current = await board.get(row.id);
				return current &&
					!current.alive &&
					current.state !== "queued" &&
					callsWith(agent, "REPLY-B").length > 0 &&
					callsWith(agent, "REPLY-A").length > 0
					? current
					: undefined;
			},
			"both replies to reach the model",
			40_000,
		);
		sampling = false;
		await sampler;
		expect(done.state).toBe("completed");
		expect(maxWorkers).toBe(1);
	}, 120_000);
});
