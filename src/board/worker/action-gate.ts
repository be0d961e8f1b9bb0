/**
 * The second line, at the action: an answer given for the person (a rule's or the supervisor model's)
 * does not authorize what it did not see. After one, a bash call that discards, deletes, rewrites
 * history, installs, changes permissions, kills, reaches another machine, runs fetched code or leaves
 * the workspace (classified by runner/supervisor/action.mjs, the supervisor's own classifier) is held
 * and asked of the person the way ask_user asks: the runner shows "The agent wants to run: `cmd`.
 * Allow?" as the row's question, and the person's reply comes back over the control channel. Yes lets
 * it run; anything else, no answer in time, or an answer that was not the person's blocks it with the
 * reason. After the person's own answer nothing is held: their answers are not second-guessed.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { commandAction } from "../../../runner/supervisor/action.mjs";
import type { WorkerToRunner } from "../../../runner/protocol.mjs";
import type { AskOutcome, WorkerControl } from "./control-state.ts";

/** What the person may say to let the held command run. */
const ALLOW = /^\s*(y|yes|allow|allowed|ok|okay|sure|go|go ahead|run it|do it|approve|approved)\b/i;

/** The question the row shows for a held command. */
export const heldQuestion = (command: string): string =>
	`The agent wants to run: \`${command.replace(/`/g, "'").trim()}\`. Allow?`;

export function registerActionGate(
	pi: ExtensionAPI,
	control: WorkerControl,
	send: (message: WorkerToRunner) => void,
	waitMs: number,
): void {
	pi.on("tool_call", async (event, ctx) => {
		if (event.toolName !== "bash" || !control.automatedAnswer) return undefined;
		const command = (event.input as { command?: unknown }).command;
		if (typeof command !== "string") return undefined;
		const verdict = commandAction(command);
		if (!verdict.hard) return undefined;
		const id = `held-${event.toolCallId}`;
		const wait = control.waitForAnswer(id);
		const timer = setTimeout(() => wait.cancel({ kind: "parked" }), waitMs);
		const onAbort = (): void => wait.cancel({ kind: "aborted" });
		ctx.signal?.addEventListener("abort", onAbort, { once: true });
		send({ type: "hold", id, question: heldQuestion(command) });
		let outcome: AskOutcome;
		try {
			outcome = await wait.outcome;
		} finally {
			clearTimeout(timer);
			ctx.signal?.removeEventListener("abort", onAbort);
		}
		const answer = outcome.kind === "answer" && !outcome.automated ? outcome.text : undefined;
		send({ type: "hold-end", id, ...(answer !== undefined ? { answer } : {}) });
		if (answer !== undefined && ALLOW.test(answer)) return undefined;
		const why =
			answer !== undefined
				? `the person did not allow it (they answered: ${answer})`
				: outcome.kind === "parked"
					? "the person did not answer in time"
					: "the run was stopped";
		return {
			block: true,
			reason: `Held by the agent board: \`${command}\` ${verdict.why.replace(/^`[^`]*`: /, "")}, and an answer given for the person does not cover it; ${why}. Do not run it; carry on without it or ask the user.`,
		};
	});
}
