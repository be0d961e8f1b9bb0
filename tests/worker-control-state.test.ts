/**
 * The worker's control state machine and the channel's line protocol, without pi: routing of each
 * runner message in every phase, exactly one receipt per message id, `closed` exactly once.
 */
import { describe, expect, it } from "vitest";
import { LineSplitter } from "../runner/lines.mjs";
import { encodeLine, parseRunnerLine, parseWorkerLine, type WorkerToRunner } from "../runner/protocol.mjs";
import { askWaitMs } from "../src/board/worker/ask-user.ts";
import { controlFd } from "../src/board/worker/channel.ts";
import { WorkerControl, type DeliverAs } from "../src/board/worker/control-state.ts";

function harness(options: { idle?: boolean | undefined } = {}) {
	const sent: WorkerToRunner[] = [];
	const delivered: Array<{ text: string; deliverAs: DeliverAs }> = [];
	let aborts = 0;
	let holds = 0;
	const state = { idle: "idle" in options ? options.idle : false };
	const control = new WorkerControl({
		send: (message) => sent.push(message),
		deliver: (text, deliverAs) => delivered.push({ text, deliverAs }),
		abort: () => {
			aborts += 1;
			return true;
		},
		isIdle: () => state.idle,
		hold: () => {
			holds += 1;
			return () => (holds -= 1);
		},
	});
	return { control, sent, delivered, state, aborts: () => aborts, holds: () => holds };
}

const immediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("protocol lines", () => {
	it("round-trips messages and splits on \\n only (U+2028 stays inside a line)", () => {
		const text = "a\u2028b\nc\u2029 \r\n";
		const splitter = new LineSplitter();
		const encoded = encodeLine({ type: "prompt", text }) + encodeLine({ type: "abort" });
		const lines = [...splitter.push(encoded.slice(0, 7)), ...splitter.push(encoded.slice(7))];
		expect(lines.map(parseRunnerLine)).toEqual([{ type: "prompt", text }, { type: "abort" }]);
		expect(splitter.flush()).toBe("");
	});

	it("marks malformed runner lines invalid, keeping an id so the sender still gets a receipt", () => {
		expect(parseRunnerLine("not json")).toEqual({ type: "invalid" });
		expect(parseRunnerLine('{"type":"message","id":"m1","text":"x"}')).toEqual({ type: "invalid", id: "m1" });
		expect(parseRunnerLine('{"type":"message","id":"m1","text":"x","deliverAs":"later"}')).toEqual({
			type: "invalid",
			id: "m1",
		});
		expect(parseWorkerLine('{"type":"receipt","id":"m1","status":"maybe"}')).toBeUndefined();
		expect(parseWorkerLine('{"type":"receipt","id":"m1","status":"rejected","code":"run-ended"}')).toEqual({
			type: "receipt",
			id: "m1",
			status: "rejected",
			code: "run-ended",
		});
		// A code the runner does not know is dropped, never passed on as text.
		expect(parseWorkerLine('{"type":"receipt","id":"m1","status":"rejected","code":"please retry"}')).toEqual({
			type: "receipt",
			id: "m1",
			status: "rejected",
		});
	});

	it("reads the fd and the park timeout from the environment", () => {
		expect(controlFd({ AGENT_BOARD_CONTROL_FD: "3" })).toBe(3);
		for (const bad of [undefined, "", "1", "x", "-3", "3.5"])
			expect(controlFd({ AGENT_BOARD_CONTROL_FD: bad })).toBeUndefined();
		expect(askWaitMs({})).toBe(600_000);
		expect(askWaitMs({ AGENT_BOARD_ASK_WAIT: "1.5" })).toBe(1500);
		expect(askWaitMs({ AGENT_BOARD_ASK_WAIT: "soon" })).toBe(600_000);
	});
});

describe("WorkerControl", () => {
	it("hands the prompt to a waiting input handler, holding the process meanwhile", async () => {
		const { control, holds } = harness();
		const prompt = control.awaitPrompt();
		expect(holds()).toBe(1);
		control.onLine({ type: "prompt", text: "@x" });
		expect(await prompt).toBe("@x");
		expect(holds()).toBe(0);
		expect(await control.awaitPrompt()).toBe("@x");
	});

	it("holds messages that arrive before the run starts and delivers them at agent_start", () => {
		const { control, sent, delivered } = harness();
		control.onLine({ type: "message", id: "m1", text: "early", deliverAs: "followUp" });
		expect(sent).toEqual([]);
		control.onAgentStart();
		expect(delivered).toEqual([{ text: "early", deliverAs: "followUp" }]);
		expect(sent).toEqual([{ type: "receipt", id: "m1", status: "delivered", as: "followUp" }]);
	});

	it("routes a message to a waiting ask_user as its answer, not into the run", async () => {
		const { control, sent, delivered } = harness();
		control.onAgentStart();
		const wait = control.waitForAnswer();
		expect(control.asking).toBe(true);
		control.onLine({ type: "message", id: "a1", text: "blue", deliverAs: "steer" });
		expect(await wait.outcome).toEqual({ kind: "answer", text: "blue" });
		expect(delivered).toEqual([]);
		expect(sent).toEqual([{ type: "receipt", id: "a1", status: "delivered", as: "answer" }]);
		expect(control.asking).toBe(false);
		// A later park of the same call changes nothing.
		wait.cancel({ kind: "parked" });
		expect(await wait.outcome).toEqual({ kind: "answer", text: "blue" });
	});

	it("abort settles a waiting ask_user as aborted and aborts the run; later messages are rejected", async () => {
		const { control, sent, aborts } = harness();
		control.onAgentStart();
		const wait = control.waitForAnswer();
		control.onLine({ type: "abort" });
		expect(await wait.outcome).toEqual({ kind: "aborted" });
		expect(aborts()).toBe(1);
		control.onLine({ type: "message", id: "m2", text: "x", deliverAs: "steer" });
		expect(sent).toEqual([{ type: "receipt", id: "m2", status: "rejected", code: "run-ended" }]);
	});

	it("an abort before the run starts skips the prompt and aborts at agent_start", async () => {
		const { control, aborts } = harness();
		const prompt = control.awaitPrompt();
		control.onLine({ type: "abort" });
		expect(await prompt).toBeUndefined();
		control.onAgentStart();
		expect(aborts()).toBe(1);
	});

	it("closes at before-settle when nothing is queued, exactly once, and rejects later messages", async () => {
		const { control, sent } = harness();
		control.onAgentStart();
		await control.beforeSettle(() => false, immediate);
		control.onSettled();
		control.onLine({ type: "message", id: "late", text: "x", deliverAs: "steer" });
		expect(sent).toEqual([
			{ type: "closed" },
			{ type: "receipt", id: "late", status: "rejected", code: "run-ended" },
		]);
	});

	it("stays open at before-settle when a message arrived meanwhile (pi continues with it)", async () => {
		const { control, sent, delivered } = harness();
		control.onAgentStart();
		const queue: string[] = [];
		await control.beforeSettle(
			() => queue.length > 0,
			async () => {
				control.onLine({ type: "message", id: "m1", text: "just in time", deliverAs: "followUp" });
				queue.push("just in time");
			},
		);
		expect(control.phase).toBe("running");
		expect(delivered).toEqual([{ text: "just in time", deliverAs: "followUp" }]);
		expect(sent).toEqual([{ type: "receipt", id: "m1", status: "delivered", as: "followUp" }]);
	});

	it("rejects instead of starting a second run when pi is idle", () => {
		const { control, sent, delivered, state } = harness();
		control.onAgentStart();
		state.idle = true;
		control.onLine({ type: "message", id: "m1", text: "x", deliverAs: "steer" });
		expect(delivered).toEqual([]);
		expect(sent).toEqual([{ type: "receipt", id: "m1", status: "rejected", code: "run-ended" }]);
	});

	it("answers a malformed message that has an id with a rejection", () => {
		const { control, sent } = harness();
		control.onLine({ type: "invalid", id: "bad" });
		control.onLine({ type: "invalid" });
		expect(sent).toEqual([{ type: "receipt", id: "bad", status: "rejected", code: "malformed" }]);
	});

	it("runner gone: aborts a running agent, settles waiters, sends nothing more", async () => {
		const { control, sent, aborts } = harness();
		control.onAgentStart();
		const wait = control.waitForAnswer();
		control.onRunnerGone();
		expect(aborts()).toBe(1);
		expect(await wait.outcome).toEqual({ kind: "aborted" });
		expect(await control.awaitPrompt()).toBeUndefined();
		control.onSettled();
		control.onLine({ type: "message", id: "m1", text: "x", deliverAs: "steer" });
		expect(sent).toEqual([]);
	});
});

describe("the action gate's inputs", () => {
	it("tells an answer given for the person (with answers) from the person's own", async () => {
		const { control } = harness();
		control.onLine({ type: "prompt", text: "go" });
		control.onAgentStart();
		const bySupervisor = control.waitForAnswer("call-1");
		control.onLine({ type: "message", id: "m1", text: "yes", deliverAs: "steer", answers: "call-1" });
		expect(await bySupervisor.outcome).toEqual({ kind: "answer", text: "yes", automated: true });
		const byPerson = control.waitForAnswer("call-2");
		control.onLine({ type: "message", id: "m2", text: "no", deliverAs: "steer" });
		expect(await byPerson.outcome).toEqual({ kind: "answer", text: "no" });
	});

	it("reads the hold lines and refuses malformed ones", () => {
		expect(parseWorkerLine(encodeLine({ type: "hold", id: "held-1", question: "Allow?" }))).toEqual({
			type: "hold",
			id: "held-1",
			question: "Allow?",
		});
		expect(parseWorkerLine(encodeLine({ type: "hold-end", id: "held-1", answer: "no" }))).toEqual({
			type: "hold-end",
			id: "held-1",
			answer: "no",
		});
		expect(parseWorkerLine(encodeLine({ type: "hold-end", id: "held-1" }))).toEqual({
			type: "hold-end",
			id: "held-1",
		});
		expect(parseWorkerLine('{"type":"hold","id":"","question":"x"}')).toBeUndefined();
		expect(parseWorkerLine('{"type":"hold","id":"h"}')).toBeUndefined();
	});
});
