/**
 * Worker role (AGENT_BOARD_WORKER=1): an ask_user tool that records a structured question and ends
 * the run, so the runner marks the row needs_input with that exact question instead of guessing.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";

export function isWorker(env: NodeJS.ProcessEnv = process.env): boolean {
	return env.AGENT_BOARD_WORKER === "1";
}

export function registerWorkerRole(pi: ExtensionAPI): void {
	pi.registerTool({
		name: "ask_user",
		label: "Ask user",
		description:
			"Ask the user a question and stop until they reply. Use when you need a decision, a missing fact or a confirmation you cannot safely assume. The run ends after this call; the user's answer arrives as the next message.",
		promptSnippet: "Ask the user a blocking question (ends the run until they reply)",
		promptGuidelines: [
			"You run unattended on an agent board: when you need the user's decision, call ask_user with one clear question instead of ending with a question in text.",
		],
		parameters: Type.Object({
			question: Type.String({ description: "The exact question for the user" }),
			options: Type.Optional(Type.Array(Type.String(), { description: "Choices the user can pick from, if any" })),
		}),
		async execute(_toolCallId, params) {
			return {
				content: [{ type: "text", text: "Question recorded; the user will answer in the next message." }],
				details: { question: params.question, options: params.options ?? [] },
				terminate: true,
			};
		},
	});
}
