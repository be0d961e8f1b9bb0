/**
 * Worker role (AGENT_BOARD_WORKER=1): every board worker is `pi --mode json -p` under a runner. With
 * AGENT_BOARD_CONTROL_FD it talks to that runner over a socketpair (runner/protocol.mjs): the prompt
 * arrives there instead of argv, user messages are steered in or queued as follow-ups, ask_user waits
 * in place for its answer, and a stop or a vanished runner aborts the run.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { CONTROL_FD_ENV, PROMPT_PLACEHOLDER, type WorkerToRunner } from "../../runner/protocol.mjs";
import { askWaitMs, registerAskUser } from "./worker/ask-user.ts";
import { controlFd, openControlChannel, type ControlChannel } from "./worker/channel.ts";
import { WorkerControl } from "./worker/control-state.ts";
import { registerActionGate } from "./worker/action-gate.ts";
import { guardSessionWrites, type SessionWrites } from "./worker/session-writes.ts";
import { registerTurnHold } from "./worker/turn-hold.ts";

/** After the runner vanished: how long an aborting run may take before the process exits anyway. */
const EXIT_GRACE_MS = 2000;

export { isWorker } from "./worker-env.ts";

export function registerWorkerRole(pi: ExtensionAPI, env: NodeJS.ProcessEnv = process.env): void {
	const fd = controlFd(env);
	// Tools (bash) must not inherit the variable: a pi started by the agent would read our runner's fd.
	delete env[CONTROL_FD_ENV];
	const connected = fd === undefined ? undefined : connect(pi, fd);
	const control = connected?.control;
	registerAskUser(pi, control, askWaitMs(env));
	if (connected) {
		registerTurnHold(pi, connected.control, askWaitMs(env));
		registerActionGate(pi, connected.control, connected.send, askWaitMs(env));
	}
	registerSessionWrites(pi);
}

/** A full disk holds pi's session writes in memory instead of ending the worker (worker/session-writes.ts). */
function registerSessionWrites(pi: ExtensionAPI): void {
	let writes: SessionWrites | undefined;
	pi.on("session_start", (_event, eventCtx) => {
		writes = guardSessionWrites(eventCtx.sessionManager);
	});
	pi.on("session_shutdown", async () => {
		if (writes && writes.waiting() > 0) await writes.drain();
	});
}

function connect(
	pi: ExtensionAPI,
	fd: number,
): { control: WorkerControl; send: (message: WorkerToRunner) => void } | undefined {
	let ctx: ExtensionContext | undefined;
	let channel: ControlChannel | undefined;
	let exiting = false;
	const exitNow = (): void => process.exit(1);

	const control = new WorkerControl({
		send: (message) => channel?.send(message),
		deliver: (text, deliverAs) => pi.sendUserMessage(text, { deliverAs }),
		abort: () => {
			if (!ctx) return false;
			ctx.abort();
			return true;
		},
		isIdle: () => ctx?.isIdle(),
		hold: () => channel?.hold() ?? (() => {}),
	});

	channel = openControlChannel(fd, {
		onLine: (message) => control.onLine(message),
		onEnd: () => {
			// The runner is gone (killed or crashed): nobody supervises this worker any more.
			control.onRunnerGone();
			exiting = true;
			const idle = ctx === undefined || ctx.isIdle();
			if (idle && !control.asking) setImmediate(exitNow);
			else setTimeout(exitNow, EXIT_GRACE_MS).unref();
		},
	});
	if (!channel) return undefined;

	const track = (_event: unknown, eventCtx: ExtensionContext): void => {
		ctx = eventCtx;
	};
	pi.on("session_start", track);
	pi.on("turn_start", track);
	pi.on("tool_execution_start", track);

	pi.on("input", async (event, eventCtx) => {
		ctx = eventCtx;
		if (event.source === "extension" || event.text !== PROMPT_PLACEHOLDER) return { action: "continue" };
		const prompt = await control.awaitPrompt();
		if (prompt === undefined) {
			// Stopped or orphaned before the prompt came: run nothing.
			control.onSettled();
			return { action: "handled" };
		}
		return { action: "transform", text: prompt };
	});

	pi.on("agent_start", (_event, eventCtx) => {
		ctx = eventCtx;
		control.onAgentStart();
	});

	pi.on("agent_before_settle", async (_event, eventCtx) => {
		ctx = eventCtx;
		await control.beforeSettle(
			() => eventCtx.hasPendingMessages(),
			() => new Promise((resolve) => setImmediate(resolve)),
		);
		return undefined;
	});

	pi.on("agent_settled", (_event, eventCtx) => {
		ctx = eventCtx;
		control.onSettled();
		if (exiting) setImmediate(exitNow);
	});

	// The runner sends the prompt only after this: it then knows the placeholder will be replaced.
	channel.send({ type: "ready" });
	const open = channel;
	return { control, send: (message) => open.send(message) };
}
