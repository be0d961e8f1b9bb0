/**
 * The worker's side of the control channel as a state machine, free of I/O so it can be tested alone:
 * which runner message goes where (prompt wait, ask_user answer, steer/follow-up, rejection) and when
 * the worker stops accepting messages. worker-role.ts feeds it pi's events and the channel's lines.
 */
import type { DeliverAs, InvalidLine, RunnerToWorker, WorkerToRunner } from "../../../runner/protocol.mjs";
import type { ReceiptCode } from "../../../runner/life/reasons.mjs";

export type { DeliverAs };

/** `automated`: the supervisor answered (a rule or its model), not the person; `by`: who decided it ("rule <file:line>", "model"). */
export type AskOutcome =
	| { kind: "answer"; text: string; automated?: boolean; by?: string }
	| { kind: "aborted" }
	| { kind: "parked" };

/** How a held turn end was let go: on (`go`), or the run ends (abort, runner gone, parked). */
export type TurnOutcome = "go" | "abort" | "park";

export interface ControlDeps {
	send(message: WorkerToRunner): void;
	/** pi.sendUserMessage(text, { deliverAs }) */
	deliver(text: string, deliverAs: DeliverAs): void;
	/** Abort the agent through the latest ctx; false when no ctx is known yet. */
	abort(): boolean;
	/** Whether pi is between runs (ctx.isIdle()); undefined when no ctx is known yet. */
	isIdle(): boolean | undefined;
	/** Keep the process alive while the input handler waits for the prompt (the channel is unref'd). */
	hold(): () => void;
}

/**
 * starting: before the first agent_start (messages are held, not lost); running: messages go into the
 * run; closed: `closed` was sent (or the runner is gone) and every later message is rejected.
 */
export type Phase = "starting" | "running" | "closed";

interface AskWaiter {
	/** The ask_user call's id: an answer naming it (the supervisor's) goes to this call only. */
	toolCallId?: string;
	settle(outcome: AskOutcome): void;
}

interface TurnHold {
	id: string;
	settle(outcome: TurnOutcome): void;
}

interface HeldMessage {
	id: string;
	text: string;
	deliverAs: DeliverAs;
}

export class WorkerControl {
	private phaseValue: Phase = "starting";
	private closedSent = false;
	private runnerGone = false;
	private abortRequested = false;
	private held: HeldMessage[] = [];
	private asks: AskWaiter[] = [];
	private prompt: string | undefined;
	private promptWaiters: Array<(text: string | undefined) => void> = [];
	private holdTurns = false;
	private systemText: string | undefined;
	private turnHolds: TurnHold[] = [];
	private turnSeq = 0;
	/** An ask_user question was last answered for the person (the action gate then holds what discards). */
	automatedAnswer = false;

	private readonly deps: ControlDeps;

	constructor(deps: ControlDeps) {
		this.deps = deps;
	}

	get phase(): Phase {
		return this.phaseValue;
	}

	get gone(): boolean {
		return this.runnerGone;
	}

	get asking(): boolean {
		return this.asks.length > 0;
	}

	/** Extra system text the runner sent with the prompt (a preset's), if any. */
	get system(): string | undefined {
		return this.systemText;
	}

	onLine(message: RunnerToWorker | InvalidLine): void {
		switch (message.type) {
			case "prompt":
				this.holdTurns = message.holdTurns === true;
				this.systemText = message.system;
				this.onPrompt(message.text);
				return;
			case "message":
				this.onMessage(message.id, message.text, message.deliverAs, message.answers, message.by);
				return;
			case "go":
				for (const hold of this.turnHolds.filter((candidate) => candidate.id === message.id)) hold.settle("go");
				return;
			case "abort":
				this.requestAbort();
				return;
			case "invalid":
				if (message.id !== undefined) this.reject(message.id, "malformed");
				return;
		}
	}

	/** The prompt text, waiting for it if it has not arrived; undefined when it never will (runner gone, stopped). */
	awaitPrompt(): Promise<string | undefined> {
		if (this.prompt !== undefined) return Promise.resolve(this.prompt);
		if (this.runnerGone || this.abortRequested) return Promise.resolve(undefined);
		const release = this.deps.hold();
		return new Promise((resolve) => {
			this.promptWaiters.push((text) => {
				release();
				resolve(text);
			});
		});
	}

	/** An ask_user call starts waiting; settle() is called exactly once, by the first of answer, abort, park. */
	waitForAnswer(toolCallId?: string): { outcome: Promise<AskOutcome>; cancel(outcome: AskOutcome): void } {
		let settled = false;
		let resolveOutcome: (outcome: AskOutcome) => void = () => {};
		const outcome = new Promise<AskOutcome>((resolve) => (resolveOutcome = resolve));
		const waiter: AskWaiter = {
			toolCallId,
			settle: (value) => {
				if (settled) return;
				settled = true;
				this.asks = this.asks.filter((candidate) => candidate !== waiter);
				resolveOutcome(value);
			},
		};
		if (this.runnerGone || this.abortRequested) waiter.settle({ kind: "aborted" });
		else this.asks.push(waiter);
		return { outcome, cancel: (value) => waiter.settle(value) };
	}

	/**
	 * A turn ended: when the runner asked for it (budgets), report this process's spend and wait for its
	 * `go`. A stop, a vanished runner or the end of the run lets the turn go at once ("abort"); `park()`
	 * of the returned handle gives up the wait (the run then ends, the row keeps its question).
	 */
	holdTurn(usage: { tokens: number; cost: number }, more: boolean): { outcome: Promise<TurnOutcome>; park(): void } {
		if (!this.holdTurns || this.runnerGone) return { outcome: Promise.resolve("go"), park: () => {} };
		if (this.abortRequested || this.phaseValue === "closed")
			return { outcome: Promise.resolve("abort"), park: () => {} };
		const id = `turn-${++this.turnSeq}`;
		let resolveOutcome: (outcome: TurnOutcome) => void = () => {};
		const outcome = new Promise<TurnOutcome>((resolve) => (resolveOutcome = resolve));
		let settled = false;
		const release = this.deps.hold();
		const hold: TurnHold = {
			id,
			settle: (value) => {
				if (settled) return;
				settled = true;
				release();
				this.turnHolds = this.turnHolds.filter((candidate) => candidate !== hold);
				resolveOutcome(value);
			},
		};
		this.turnHolds.push(hold);
		this.deps.send({ type: "turn-end", id, usage, more });
		return {
			outcome,
			park: () => {
				if (settled) return;
				hold.settle("park");
				this.deps.abort();
			},
		};
	}

	/** agent_start: the run exists, so held messages can go into it. */
	onAgentStart(): void {
		if (this.abortRequested) {
			this.deps.abort();
			return;
		}
		if (this.phaseValue !== "starting") return;
		this.phaseValue = "running";
		const held = this.held;
		this.held = [];
		for (const message of held) this.onMessage(message.id, message.text, message.deliverAs);
	}

	/**
	 * agent_before_settle: pi continues only if messages are queued once every handler has returned.
	 * A delivery that started before this point reaches pi's queue within the microtasks of its
	 * sendUserMessage call (input handlers are synchronous here), so one macrotask later the queue is
	 * final; a line that arrives meanwhile is still delivered and makes pi continue.
	 */
	async beforeSettle(hasPendingMessages: () => boolean, nextTick: () => Promise<void>): Promise<void> {
		if (this.phaseValue !== "running") return;
		await nextTick();
		if (this.phaseValue !== "running" || hasPendingMessages()) return;
		this.close();
	}

	/** agent_settled: nothing more runs (an aborted run skips agent_before_settle, so this closes it). */
	onSettled(): void {
		this.close();
	}

	/** EOF on the channel: nobody is left to answer or read receipts. */
	onRunnerGone(): void {
		this.runnerGone = true;
		this.closedSent = true;
		this.requestAbort();
		this.phaseValue = "closed";
	}

	private onPrompt(text: string): void {
		if (this.prompt !== undefined) return;
		this.prompt = text;
		this.flushPrompt(text);
	}

	private flushPrompt(text: string | undefined): void {
		const waiters = this.promptWaiters;
		this.promptWaiters = [];
		for (const waiter of waiters) waiter(text);
	}

	private onMessage(id: string, text: string, deliverAs: DeliverAs, answers?: string, by?: string): void {
		if (this.phaseValue === "closed" || this.abortRequested) {
			this.reject(id, "run-ended");
			return;
		}
		if (answers !== undefined) {
			// Only the answer to that one call: a question a person answered first does not take it as a steer.
			const asked = this.asks.find((candidate) => candidate.toolCallId === answers);
			if (!asked) {
				this.reject(id, "answered");
				return;
			}
			this.deps.send({ type: "receipt", id, status: "delivered", as: "answer" });
			asked.settle({ kind: "answer", text, automated: true, ...(by ? { by } : {}) });
			return;
		}
		const ask = this.asks[0];
		if (ask) {
			// Receipt first: the runner records the answer before the model's next request can use it.
			this.deps.send({ type: "receipt", id, status: "delivered", as: "answer" });
			ask.settle({ kind: "answer", text });
			return;
		}
		if (this.phaseValue === "starting") {
			this.held.push({ id, text, deliverAs });
			return;
		}
		// An idle pi would start a second run from this message while print mode is finishing.
		if (this.deps.isIdle() !== false) {
			this.reject(id, "run-ended");
			return;
		}
		this.deps.deliver(text, deliverAs);
		this.deps.send({ type: "receipt", id, status: "delivered", as: deliverAs });
	}

	private requestAbort(): void {
		this.abortRequested = true;
		for (const ask of [...this.asks]) ask.settle({ kind: "aborted" });
		for (const hold of [...this.turnHolds]) hold.settle("abort");
		this.flushPrompt(undefined);
		// Messages queued in pi after an abort would never run: refuse them from now on.
		for (const message of this.held) this.reject(message.id, "run-ended");
		this.held = [];
		if (this.phaseValue === "running") this.deps.abort();
	}

	private close(): void {
		if (this.phaseValue === "closed" && this.closedSent) return;
		this.phaseValue = "closed";
		for (const message of this.held) this.reject(message.id, "run-ended");
		this.held = [];
		for (const ask of [...this.asks]) ask.settle({ kind: "aborted" });
		for (const hold of [...this.turnHolds]) hold.settle("abort");
		if (!this.closedSent) {
			this.closedSent = true;
			this.deps.send({ type: "closed" });
		}
	}

	private reject(id: string, code: ReceiptCode): void {
		if (this.runnerGone) return;
		this.deps.send({ type: "receipt", id, status: "rejected", code });
	}
}
