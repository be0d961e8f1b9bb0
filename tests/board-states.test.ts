/**
 * Board engine end to end: the real runner and the real pi binary with the scripted faux model.
 * Runs are dispatched in parallel inside each test to keep the suite short on two cores.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { boardFor, modes, readEvents, waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, userTexts, waitFor, type TestAgent } from "../test-support/pi-harness.ts";
import { allArgv, runTaggedProcs, storeRunners } from "../test-support/proc-scan.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

function agentWith(script: Parameters<typeof createTestAgent>[0]): TestAgent {
	const agent = createTestAgent(script);
	agents.push(agent);
	return agent;
}

describe("board run states", () => {
	it("reaches completed, needs_input (tool and heuristic) and failed (model error, bad pi), with verbatim prompts and private files", async () => {
		const agent = agentWith({
			script: {
				rules: [
					{
						match: "ASK-TOOL",
						steps: [
							{
								toolCall: {
									name: "ask_user",
									args: { question: "Deploy to staging or prod?", options: ["staging", "prod"] },
								},
							},
							{ text: "must not be reached" },
						],
					},
					{ match: "ASK-TEXT", steps: [{ text: "I found two configs. Should I merge them?" }] },
					{ match: "MODEL-ERROR", steps: [{ error: "provider exploded" }] },
					{
						match: "ENV-CHECK",
						steps: [
							{
								toolCall: {
									name: "bash",
									args: {
										command:
											'echo "env:$AGENT_BOARD_WORKER:$AGENT_BOARD_ROW:$PONYTAIL_DEFAULT_MODE:$PONYTAIL_CONDENSED"',
									},
								},
							},
							{ text: "Checked." },
						],
					},
				],
				fallback: [{ text: "All tests pass. Nothing else to do." }],
			},
		});
		// The question parks after a second, so the run ends as needs_input (the in-place wait is board-talk's).
		agent.env.AGENT_BOARD_ASK_WAIT = "1";
		writeFileSync(join(agent.cwd, "README.md"), "FILE CONTENT MUST NOT BE SENT\n");
		const board = boardFor(agent);
		const tricky = [
			"-rf --help",
			"$(touch pwned) `id` ; echo 'single' \"double\"",
			"unicode: \u00e9\u00e8 \u4e2d\u6587 \u2028 line-sep",
			"@README.md",
			"@README.md summarize this file",
			"line one\nline two\n\n  indented line three  \n",
			"\u2028leading and trailing separators\u2029",
			`big ${"x".repeat(100 * 1024)}`,
		];
		// No prompt may ever appear in any process's argv (readable by every local user).
		let argvLeak = "";
		let scanning = true;
		const scanner = (async () => {
			while (scanning) {
				const argv = allArgv();
				const leaked = tricky.find((prompt) => argv.includes(prompt.slice(0, 24)) && prompt.length > 12);
				if (leaked) argvLeak = leaked;
				await new Promise((r) => setTimeout(r, 20));
			}
		})();
		const [done, askTool, askText, modelError, ...verbatim] = await Promise.all(
			["plain task", "ASK-TOOL now", "ASK-TEXT now", "MODEL-ERROR now", ...tricky].map((prompt) =>
				board.dispatch({ prompt, cwd: agent.cwd }),
			),
		);
		const envRow = await board.dispatch({
			prompt: "ENV-CHECK",
			cwd: agent.cwd,
			ponytailMode: "terse",
			model: "faux/faux-2",
			thinking: "low",
		});
		const bad = boardFor(agent, { piCommand: [join(agent.root, "no-such-pi")] });
		const badPi = await bad.dispatch({ prompt: "never runs", cwd: agent.cwd });
		await expect(board.dispatch({ prompt: "x", cwd: join(agent.root, "missing-dir") })).rejects.toThrow(
			/working directory does not exist/,
		);

		const finished = new Map<string, Awaited<ReturnType<typeof waitDone>>>();
		for (const row of [done, askTool, askText, modelError, badPi, envRow, ...verbatim]) {
			if (!row) throw new Error("dispatch returned nothing");
			finished.set(row.id, await waitDone(board, row.id));
		}
		const final = (id: string | undefined) => finished.get(id ?? "")!;
		scanning = false;
		await scanner;
		expect(argvLeak).toBe("");

		expect(final(done?.id).state).toBe("completed");
		expect(final(done?.id).summary).toBe("All tests pass.");
		expect(final(askTool?.id)).toMatchObject({
			state: "needs_input",
			question: "Deploy to staging or prod?",
			questionOptions: ["staging", "prod"],
		});
		expect(final(askText?.id)).toMatchObject({
			state: "needs_input",
			question: "I found two configs. Should I merge them?",
		});
		expect(final(modelError?.id)).toMatchObject({ state: "failed", error: "provider exploded" });
		expect(final(badPi.id).state).toBe("failed");
		expect(final(badPi.id).error).toContain("pi not found");
		expect(final(badPi.id).error).toContain("no-such-pi");

		// Workers run in the worker role with the row's ponytail mode, condensed.
		const envResult = readEvents(final(envRow.id).runDir!).find(
			(e) => e.type === "tool_execution_end" && e.toolName === "bash",
		);
		expect(envResult?.result).toContain(`env:1:${envRow.id}:terse:1`);
		const envCalls = agent.calls().filter((call) => userTexts(call).includes("ENV-CHECK"));
		expect(envCalls.map((call) => call.model)).toEqual(envCalls.map(() => expect.stringContaining("faux-2")));
		expect(envCalls.length).toBeGreaterThan(0);
		expect(final(envRow.id)).toMatchObject({ model: "faux/faux-2", thinking: "low", ponytailMode: "terse" });

		// A parked ask_user ends the run: the model is never asked again after the tool call.
		const askCalls = agent.calls().filter((call) => userTexts(call).some((t) => t.includes("ASK-TOOL")));
		expect(askCalls).toHaveLength(1);

		// Byte for byte: a leading "@" is text, not a file; whitespace and separators survive.
		const seenPrompts = agent.calls().flatMap((call) => userTexts(call));
		for (const prompt of tricky) expect(seenPrompts).toContain(prompt);
		expect(seenPrompts.join("\n")).not.toContain("FILE CONTENT MUST NOT BE SENT");
		expect(existsSync(join(agent.cwd, "pwned"))).toBe(false);
		for (const row of verbatim) expect(final(row?.id).state).toBe("completed");

		// Every worker event is recorded, in order, ending with agent_settled.
		const events = readEvents(final(done?.id).runDir!);
		expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
		expect(events[0]?.type).toBe("session");
		expect(events.at(-1)?.type).toBe("agent_settled");

		// The workers' TMPDIR (<store>/tmp, 0700) holds what jiti and node cache with their own modes.
		const workerTmp = join(board.storeDir, "tmp");
		const entries = modes(board.storeDir).filter((e) => !e.path.startsWith(`${workerTmp}/`));
		expect(entries.find((e) => e.path === workerTmp)).toMatchObject({ dir: true, mode: 0o700 });
		expect(entries.filter((e) => e.dir && e.mode !== 0o700)).toEqual([]);
		expect(entries.filter((e) => !e.dir && e.mode !== 0o600)).toEqual([]);
		expect(entries.some((e) => e.path.endsWith(".jsonl") && e.path.includes("sessions"))).toBe(true);
	}, 120_000);

	it("stops a stalled run, keeps a queued run processless, fails on worker SIGKILL, and a runner SIGKILL mid-bash leaves nothing behind", async () => {
		const agent = agentWith({
			script: {
				rules: [
					{
						match: "BASH-HANG",
						steps: [{ toolCall: { name: "bash", args: { command: "sleep 120" } } }, { text: "unreachable" }],
					},
				],
				fallback: [{ stall: true }],
			},
		});
		const board = boardFor(agent, { stopGraceMs: 1500, maxConcurrent: 3 });
		const rows = await Promise.all(
			["stall 1", "stall 2", "BASH-HANG now"].map((prompt) => board.dispatch({ prompt, cwd: agent.cwd })),
		);
		const worker = (runDir: string) =>
			JSON.parse(readFileSync(join(runDir, "worker.json"), "utf8")) as { pid: number };
		const runner = (runDir: string) =>
			JSON.parse(readFileSync(join(runDir, "runner.json"), "utf8")) as { pid: number };
		await waitFor(
			async () => (await board.get(rows[2]!.id))?.live?.tool?.name === "bash",
			"the bash tool to run",
			30_000,
		);
		await waitFor(() => agent.calls().length >= 3, "three model calls", 30_000);
		// Over the limit: a queued run is a file, not a process; a stop while queued never starts it.
		const queued = await board.dispatch({ prompt: "stall queued", cwd: agent.cwd });
		expect((await board.get(queued.id))?.state).toBe("queued");
		expect(existsSync(join(queued.runDir!, "runner.json"))).toBe(false);
		expect(storeRunners(board.storeDir)).toHaveLength(3);
		const stoppedQueued = await board.stop(queued.id);
		expect(stoppedQueued.state).toBe("stopped");
		expect(existsSync(join(queued.runDir!, "worker.json"))).toBe(false);
		const [toStop, toKillWorker, toKillRunner] = await Promise.all(rows.map((row) => board.get(row.id)));
		expect(toStop?.state).toBe("working");

		const stopped = await board.stop(toStop!.id);
		expect(stopped.state).toBe("stopped");
		expect(stopped.alive).toBe(false);

		process.kill(worker(toKillWorker!.runDir!).pid, "SIGKILL");
		const killedWorker = await waitDone(board, toKillWorker!.id, 10_000);
		expect(killedWorker.state).toBe("failed");
		expect(killedWorker.error).toContain("SIGKILL");

		// pi starts bash in its own process group: killing the runner must still leave nothing of the run.
		const runId = toKillRunner!.currentRunId!;
		expect(runTaggedProcs([runId]).length).toBeGreaterThanOrEqual(3);
		const versionBefore = await board.version();
		process.kill(runner(toKillRunner!.runDir!).pid, "SIGKILL");
		await waitFor(async () => (await board.version()) !== versionBefore, "version to notice the dead runner", 10_000);
		const died = await waitDone(board, toKillRunner!.id, 10_000);
		expect(died).toMatchObject({ state: "failed", error: "runner died", alive: false });
		// Reads only read: the store's keeper (or the board's supervise step, whichever comes first) records
		// the end, after ending what is left of the run.
		await board.supervise();
		await waitFor(
			() =>
				(JSON.parse(readFileSync(join(toKillRunner!.runDir!, "status.json"), "utf8")) as { endedAt?: number })
					.endedAt,
			"the dead runner's end to be recorded",
			10_000,
		);
		await waitFor(() => runTaggedProcs([runId]).length === 0, "every process of the killed run to be gone", 10_000);
		// Its slot went back when its end was recorded, not at some later claim that found every slot taken.
		const slotOwners = readdirSync(join(board.storeDir, "slots")).map((name) =>
			readFileSync(join(board.storeDir, "slots", name), "utf8"),
		);
		expect(slotOwners.filter((owner) => owner.includes(runId))).toEqual([]);
	}, 120_000);

	it("resumes a row on the same session so the model sees the earlier conversation", async () => {
		const agent = agentWith({
			script: {
				rules: [{ match: "first", steps: [{ text: "Which colour should I use?" }] }],
				fallback: [{ text: "Using blue as asked." }],
			},
		});
		const board = boardFor(agent);
		const row = await board.dispatch({ prompt: "first: paint the shed", cwd: agent.cwd });
		expect((await waitDone(board, row.id)).state).toBe("needs_input");
		const replied = (await board.reply(row.id, "blue please")).row;
		expect(replied.currentRunId).not.toBe(row.currentRunId);
		const after = await waitDone(board, row.id);
		expect(after.state).toBe("completed");
		const last = agent.calls().at(-1)!;
		expect(userTexts(last)).toEqual(["first: paint the shed", "blue please"]);
		const assistantTexts = last.messages.filter((m) => m.role === "assistant").map((m) => JSON.stringify(m.content));
		expect(assistantTexts.join("")).toContain("Which colour should I use?");
		await expect(board.reply(row.id, "   ")).rejects.toThrow(/prompt/);
	}, 120_000);

	it("adds an optional model summary after the terminal state is already written", async () => {
		const agent = agentWith({
			script: {
				rules: [{ match: "Summarize in one short sentence", steps: [{ text: "Model says: refactor landed." }] }],
				fallback: [{ text: "Refactored the parser. Tests pass." }],
			},
		});
		agent.env.AGENT_BOARD_SUMMARY_MODEL = "faux/faux-2";
		const board = boardFor(agent);
		const row = await board.dispatch({ prompt: "refactor the parser", cwd: agent.cwd });
		const first = await waitDone(board, row.id);
		expect(first.state).toBe("completed");
		const { waitFor } = await import("../test-support/pi-harness.ts");
		const summarized = await waitFor(
			async () => {
				const current = await board.get(row.id);
				return current?.summary === "Model says: refactor landed." ? current : undefined;
			},
			"model summary",
			60_000,
		);
		expect(summarized.state).toBe("completed");
		expect(agent.calls().some((call) => call.model.includes("faux-2"))).toBe(true);
	}, 120_000);
});
