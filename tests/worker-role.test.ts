/**
 * The worker role's side of the run control channel, end to end: the real pi binary with the scripted
 * faux model, started the way the runner starts a worker (fd 3 a socketpair, the prompt placeholder as
 * the only argument), with this test playing the runner.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Message, ToolResultMessage } from "@earendil-works/pi-ai";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { PROMPT_PLACEHOLDER } from "../runner/protocol.mjs";
import {
	createTestAgent,
	REPO_ROOT,
	userTexts,
	waitFor,
	type FauxCall,
	type PiEvent,
	type TestAgent,
} from "../test-support/pi-harness.ts";
import {
	allCommandLines,
	isClosed,
	isReceipt,
	spawnWorker,
	toolStarted,
	type WorkerProcess,
} from "../test-support/worker-channel.ts";

const HOLD_SETTLED = join(REPO_ROOT, "test-support/hold-settled-extension.ts");

const agents: TestAgent[] = [];
const workers: WorkerProcess[] = [];
afterEach(() => {
	for (const worker of workers.splice(0)) worker.kill();
});
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

/** A bash command that blocks until `file` exists; `marker` makes its process findable in /proc. */
function waitForFileCommand(file: string, marker: string): string {
	return `while [ ! -e '${file}' ]; do sleep 0.05; done; echo released ${marker}`;
}

function newAgent(): TestAgent {
	const agent = createTestAgent();
	agents.push(agent);
	return agent;
}

function start(agent: TestAgent, options: Parameters<typeof spawnWorker>[1] = {}): WorkerProcess {
	const worker = spawnWorker(agent, options);
	workers.push(worker);
	return worker;
}

function lastUserText(call: FauxCall): string | undefined {
	return userTexts(call).at(-1);
}

function toolResults(call: FauxCall): ToolResultMessage[] {
	return call.messages.filter((message: Message): message is ToolResultMessage => message.role === "toolResult");
}

function toolEnd(events: PiEvent[], name: string): PiEvent | undefined {
	return events.find((event) => event.type === "tool_execution_end" && event.toolName === name);
}

function details(event: PiEvent | undefined): Record<string, unknown> {
	const result = event?.result as { details?: Record<string, unknown> } | undefined;
	return result?.details ?? {};
}

describe("prompt over the control channel", () => {
	it("reaches the model and the session byte for byte and never appears in any argv", async () => {
		const agent = newAgent();
		writeFileSync(join(agent.cwd, "README.md"), "FILE CONTENT MUST NOT BE SENT\n");
		const big = "x".repeat(100 * 1024);
		const prompts = [
			"@README.md",
			`@README.md summarize this file\nsecond line\u2028still second\n\n  indented ${big} trailing  \t\n`,
			"\u2028starts with a line separator\r\nand ends with one\u2028",
		];
		const runs = prompts.map((text) => ({ text, worker: start(agent) }));
		const seenInArgv: string[] = [];
		const scan = (): void => {
			for (const { cmdline } of allCommandLines()) {
				for (const { text } of runs) if (cmdline.includes(text.slice(0, 40))) seenInArgv.push(cmdline);
			}
		};
		for (const run of runs) run.worker.send({ type: "prompt", text: run.text });
		const exits = Promise.all(runs.map((run) => run.worker.exited(120_000)));
		let done = false;
		void exits.finally(() => (done = true));
		// A prompt passed in argv would sit there for the worker's whole life: a look every 50 ms finds it. Every
		// 5 ms, the scans of every process took a core from the three pi starting (30 s at load 17 in CI).
		while (!done) {
			scan();
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
		for (const exit of await exits) expect(exit.code).toBe(0);

		expect(seenInArgv).toEqual([]);
		const calls = agent.calls();
		for (const { text, worker } of runs) {
			expect(worker.argv.at(-1)).toBe(PROMPT_PLACEHOLDER);
			const call = calls.find((candidate) => candidate.pid === worker.pid);
			expect(call && lastUserText(call)).toBe(text);
			const session = readFileSync(worker.sessionFile, "utf8");
			const userEntries = session
				.split("\n")
				.filter(Boolean)
				.map((line) => JSON.parse(line) as { type: string; message?: Message })
				.filter((entry) => entry.type === "message" && entry.message?.role === "user");
			expect(
				userEntries.map((entry) => entry.message && userTexts({ messages: [entry.message] } as FauxCall)[0]),
			).toEqual([text]);
			expect(session).not.toContain(PROMPT_PLACEHOLDER);
			expect(worker.readySent()).toBe(true);
			expect(worker.lines).toEqual([{ type: "closed" }]);
			expect(worker.malformed).toEqual([]);
		}
	}, 180_000);

	it("a runner that dies before sending the prompt leaves no worker behind", async () => {
		const agent = newAgent();
		const worker = start(agent);
		// pi prints the session header once extensions (and so the channel) are loaded.
		await worker.waitForEvent((event) => event.type === "session", "the session header");
		worker.closeChannel();
		await worker.exited();
		expect(agent.calls()).toEqual([]);
	});
});

describe("messages into a running worker", () => {
	it("steers a worker inside a long tool call: delivered as steer, in the next request, same process", async () => {
		const agent = newAgent();
		const release = join(agent.root, "release-steer");
		agent.writeScript({
			rules: [
				{
					match: "STEER-TASK",
					steps: [
						{ toolCall: { name: "bash", args: { command: waitForFileCommand(release, "steer") } } },
						{ text: "task done" },
					],
				},
			],
			fallback: [{ text: "acting on the steer" }],
		});
		const worker = start(agent);
		// Sent late (pi is already up) so the input handler usually has to wait for it.
		await worker.waitForEvent((event) => event.type === "session", "the session header");
		worker.send({ type: "prompt", text: "STEER-TASK go" });
		await worker.waitForEvent(toolStarted("bash"), "the bash tool to start");
		worker.send({ type: "message", id: "m1", text: "STEER: use the other branch", deliverAs: "steer" });
		expect(await worker.waitForLine(isReceipt("m1"), "receipt m1")).toEqual({
			type: "receipt",
			id: "m1",
			status: "delivered",
			as: "steer",
		});
		writeFileSync(release, "");
		expect((await worker.exited()).code).toBe(0);

		const calls = agent.calls();
		expect(calls.map((call) => call.pid)).toEqual([worker.pid, worker.pid]);
		const second = calls[1]!;
		expect(lastUserText(second)).toBe("STEER: use the other branch");
		// The steer lands after the running tool's result, before the next model request.
		expect(toolResults(second)).toHaveLength(1);
		expect(second.messages.at(-1)?.role).toBe("user");
		expect(worker.lines.filter(isClosed)).toHaveLength(1);
	});

	it("queues a follow-up until the current turn is done", async () => {
		const agent = newAgent();
		const release = join(agent.root, "release-follow");
		agent.writeScript({
			rules: [
				{
					match: "FOLLOW-TASK",
					steps: [
						{ toolCall: { name: "bash", args: { command: waitForFileCommand(release, "follow") } } },
						{ text: "task done" },
					],
				},
			],
			fallback: [{ text: "follow-up handled" }],
		});
		const worker = start(agent);
		worker.send({ type: "prompt", text: "FOLLOW-TASK go" });
		await worker.waitForEvent(toolStarted("bash"), "the bash tool to start");
		worker.send({ type: "message", id: "f1", text: "FOLLOW: then write the changelog", deliverAs: "followUp" });
		expect(await worker.waitForLine(isReceipt("f1"), "receipt f1")).toEqual({
			type: "receipt",
			id: "f1",
			status: "delivered",
			as: "followUp",
		});
		writeFileSync(release, "");
		expect((await worker.exited()).code).toBe(0);

		const calls = agent.calls();
		expect(calls.map((call) => call.pid)).toEqual([worker.pid, worker.pid, worker.pid]);
		// Request 2 finishes the task without the follow-up; request 3 carries it after "task done".
		expect(userTexts(calls[1]!)).toEqual(["FOLLOW-TASK go"]);
		expect(lastUserText(calls[2]!)).toBe("FOLLOW: then write the changelog");
		const beforeFollowUp = calls[2]!.messages.at(-2);
		expect(beforeFollowUp?.role).toBe("assistant");
	});

	it("rejects a message once the run has settled, after sending closed", async () => {
		const agent = newAgent();
		const hold = join(agent.root, "hold-settled");
		const worker = start(agent, { extensions: [HOLD_SETTLED], env: { PAB_HOLD_SETTLED_FILE: hold } });
		worker.send({ type: "prompt", text: "just answer" });
		await worker.waitForLine(isClosed, "closed");
		worker.send({ type: "message", id: "late", text: "too late", deliverAs: "steer" });
		expect(await worker.waitForLine(isReceipt("late"), "receipt late")).toEqual({
			type: "receipt",
			id: "late",
			status: "rejected",
			code: "run-ended",
		});
		writeFileSync(hold, "");
		expect((await worker.exited()).code).toBe(0);
		expect(agent.calls()).toHaveLength(1);
		expect(worker.lines).toEqual([
			{ type: "closed" },
			{ type: "receipt", id: "late", status: "rejected", code: "run-ended" },
		]);
	});
});

describe("ask_user waits in place", () => {
	const askScript = {
		rules: [
			{
				match: "ASK-TASK",
				steps: [
					{ toolCall: { name: "ask_user", args: { question: "Which color?", options: ["red", "blue"] } } },
					{ text: "painting it" },
				],
			},
		],
		fallback: [{ text: "unexpected" }],
	};

	it("answers the question with the next message: receipt answer, tool result, same process", async () => {
		const agent = newAgent();
		agent.writeScript(askScript);
		const worker = start(agent);
		worker.send({ type: "prompt", text: "ASK-TASK paint" });
		const started = await worker.waitForEvent(toolStarted("ask_user"), "ask_user to start");
		expect(started.args).toEqual({ question: "Which color?", options: ["red", "blue"] });
		worker.send({ type: "message", id: "a1", text: "blue, please", deliverAs: "steer" });
		expect(await worker.waitForLine(isReceipt("a1"), "receipt a1")).toEqual({
			type: "receipt",
			id: "a1",
			status: "delivered",
			as: "answer",
		});
		expect((await worker.exited()).code).toBe(0);

		const calls = agent.calls();
		expect(calls.map((call) => call.pid)).toEqual([worker.pid, worker.pid]);
		const results = toolResults(calls[1]!);
		expect(results.map((result) => result.content)).toEqual([
			[{ type: "text", text: "The user answered: blue, please" }],
		]);
		// The answer is the tool result, not an extra user message.
		expect(userTexts(calls[1]!)).toEqual(["ASK-TASK paint"]);
		expect(details(toolEnd(worker.events(), "ask_user"))).toMatchObject({ answered: true, answer: "blue, please" });
	});

	it("parks after AGENT_BOARD_ASK_WAIT: the run ends with a parked result", async () => {
		const agent = newAgent();
		agent.writeScript(askScript);
		const worker = start(agent, { env: { AGENT_BOARD_ASK_WAIT: "1" } });
		worker.send({ type: "prompt", text: "ASK-TASK paint" });
		expect((await worker.exited()).code).toBe(0);
		expect(details(toolEnd(worker.events(), "ask_user"))).toEqual({
			parked: true,
			question: "Which color?",
			options: ["red", "blue"],
		});
		expect(agent.calls()).toHaveLength(1);
		expect(worker.lines).toEqual([{ type: "closed" }]);
	});

	it("abort while waiting ends the run as aborted", async () => {
		const agent = newAgent();
		agent.writeScript(askScript);
		const worker = start(agent);
		worker.send({ type: "prompt", text: "ASK-TASK paint" });
		await worker.waitForEvent(toolStarted("ask_user"), "ask_user to start");
		worker.send({ type: "abort" });
		await worker.exited();
		const events = worker.events();
		expect(details(toolEnd(events, "ask_user"))).toMatchObject({ aborted: true, question: "Which color?" });
		expect(events.filter((event) => event.type === "agent_settled").map((event) => event.aborted)).toEqual([true]);
		expect(agent.calls()).toHaveLength(1);
		expect(worker.lines).toEqual([{ type: "closed" }]);
	});

	it("without a channel, ask_user ends the run at once (parked)", async () => {
		const agent = newAgent();
		agent.writeScript(askScript);
		// No channel means no prompt delivery either: such a worker gets its prompt as an argument.
		const worker = start(agent, { noChannel: true, promptArg: "ASK-TASK paint" });
		expect((await worker.exited()).code).toBe(0);
		expect(details(toolEnd(worker.events(), "ask_user"))).toEqual({
			parked: true,
			question: "Which color?",
			options: ["red", "blue"],
		});
		expect(agent.calls()).toHaveLength(1);
	});
});

describe("the runner goes away", () => {
	it("closing fd 3 during a tool call aborts the run, ends the tool's processes and exits pi", async () => {
		const agent = newAgent();
		const marker = `orphan-${Date.now()}`;
		agent.writeScript({
			rules: [
				{
					match: "LONG-TASK",
					steps: [
						{
							toolCall: {
								name: "bash",
								args: { command: waitForFileCommand(join(agent.root, "never"), marker) },
							},
						},
						{ text: "unexpected" },
					],
				},
			],
		});
		const worker = start(agent);
		worker.send({ type: "prompt", text: "LONG-TASK go" });
		await worker.waitForEvent(toolStarted("bash"), "the bash tool to start");
		await waitFor(() => allCommandLines().some(({ cmdline }) => cmdline.includes(marker)), "the tool's shell");
		worker.closeChannel();
		await worker.exited();
		await waitFor(
			() => !allCommandLines().some(({ cmdline }) => cmdline.includes(marker)),
			"the tool's shell to end",
		);
		expect(agent.calls()).toHaveLength(1);
	});

	it("closing fd 3 while ask_user waits exits pi", async () => {
		const agent = newAgent();
		agent.writeScript({
			rules: [
				{ steps: [{ toolCall: { name: "ask_user", args: { question: "Still there?" } } }, { text: "unexpected" }] },
			],
		});
		const worker = start(agent);
		worker.send({ type: "prompt", text: "ask me" });
		await worker.waitForEvent(toolStarted("ask_user"), "ask_user to start");
		worker.closeChannel();
		await worker.exited();
		expect(agent.calls()).toHaveLength(1);
	});
});
