/**
 * ask_user: a structured question for the user. With a control channel it waits in place for the
 * answer (the run keeps its process and warm prompt cache) and parks after AGENT_BOARD_ASK_WAIT
 * seconds; without one it ends the run at once and the answer comes as the next message of a new run.
 */
import type { AgentToolResult, ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { ASK_WAIT_ENV, DEFAULT_ASK_WAIT_SECONDS } from "../../../runner/protocol.mjs";
import type { AskOutcome, WorkerControl } from "./control-state.ts";

export interface AskUserDetails {
	question: string;
	options: string[];
	answered?: boolean;
	answer?: string;
	/** Who decided the answer when the supervisor gave it ("rule <file:line>", "model"); absent: the person. */
	answeredBy?: string;
	parked?: boolean;
	aborted?: boolean;
}

/** Park timeout in ms from the environment; a missing or malformed value means the default. */
export function askWaitMs(env: NodeJS.ProcessEnv): number {
	const raw = env[ASK_WAIT_ENV]?.trim();
	const seconds = raw && /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : DEFAULT_ASK_WAIT_SECONDS;
	return Math.round(seconds * 1000);
}

const PARKED_TEXT =
	"The user has not answered yet. The run ends here; the user's answer will arrive as the next message.";

export function registerAskUser(pi: ExtensionAPI, control: WorkerControl | undefined, waitMs: number): void {
	const inPlace = control !== undefined;
	pi.registerTool({
		name: "ask_user",
		label: "Ask user",
		description: inPlace
			? "Ask the user a question and wait for their reply. Use when you need a decision, a missing fact or a confirmation you cannot safely assume. The user's answer is this tool's result; if they do not answer in time, the run ends and the answer arrives as the next message."
			: "Ask the user a question and stop until they reply. Use when you need a decision, a missing fact or a confirmation you cannot safely assume. The run ends after this call; the user's answer arrives as the next message.",
		promptSnippet: inPlace
			? "Ask the user a blocking question (the answer comes back as the result)"
			: "Ask the user a blocking question (ends the run until they reply)",
		promptGuidelines: [
			"You run unattended on an agent board: when you need the user's decision, call ask_user with one clear question instead of ending with a question in text.",
			...(inPlace ? ["ask_user waits for the user: continue from the answer in its result."] : []),
		],
		parameters: Type.Object({
			question: Type.String({ description: "The exact question for the user" }),
			options: Type.Optional(Type.Array(Type.String(), { description: "Choices the user can pick from, if any" })),
		}),
		async execute(toolCallId, params, signal): Promise<AgentToolResult<AskUserDetails>> {
			const base = { question: params.question, options: params.options ?? [] };
			if (!control) return parked(base);
			const outcome = await waitInPlace(control, waitMs, signal, toolCallId);
			switch (outcome.kind) {
				case "answer":
					// What follows an answer given for the person passes the action gate (action-gate.ts).
					control.automatedAnswer = outcome.automated === true;
					return {
						content: [{ type: "text", text: `The user answered: ${outcome.text}` }],
						details: {
							...base,
							answered: true,
							answer: outcome.text,
							...(outcome.by ? { answeredBy: outcome.by } : {}),
						} satisfies AskUserDetails,
					};
				case "parked":
					return parked(base);
				case "aborted":
					return {
						content: [{ type: "text", text: "The run was stopped before the user answered." }],
						details: { ...base, aborted: true } satisfies AskUserDetails,
						terminate: true,
					};
			}
		},
	});
}

function parked(base: AskUserDetails): AgentToolResult<AskUserDetails> {
	return {
		content: [{ type: "text", text: PARKED_TEXT }],
		details: { ...base, parked: true } satisfies AskUserDetails,
		terminate: true,
	};
}

/** The first of: an answer or abort from the channel, the tool's abort signal, the park timer. */
async function waitInPlace(
	control: WorkerControl,
	waitMs: number,
	signal: AbortSignal | undefined,
	toolCallId: string,
): Promise<AskOutcome> {
	const wait = control.waitForAnswer(toolCallId);
	// Ref'd on purpose: the channel is unref'd and a pending promise holds nothing, so this timer is
	// what keeps pi alive while the question waits.
	const timer = setTimeout(() => wait.cancel({ kind: "parked" }), waitMs);
	const onAbort = (): void => wait.cancel({ kind: "aborted" });
	if (signal?.aborted) onAbort();
	else signal?.addEventListener("abort", onAbort, { once: true });
	try {
		return await wait.outcome;
	} finally {
		clearTimeout(timer);
		signal?.removeEventListener("abort", onAbort);
	}
}
