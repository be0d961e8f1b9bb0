/**
 * Test-only pi extension: registers a scripted "faux" provider whose answers come from
 * `<agentDir>/faux-script.json`, and records every request it receives under
 * `<agentDir>/faux-calls/`. Loaded by pi from `<agentDir>/extensions/`, so every pi process that
 * shares the agent dir (including board workers) talks to the same scripted model.
 */
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import type {
	AssistantMessage,
	FauxContentBlock,
	FauxModelDefinition,
	FauxResponseFactory,
	JsonObject,
	Message,
} from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

// The scripted model's vocabulary lives here, once: this file is copied alone into a throwaway agent
// dir, so it imports nothing of ours; tests take the types through faux-script.ts.
export type FauxStep =
	| { text: string; usage?: { input: number; output: number } }
	| { toolCall: { name: string; args: JsonObject }; text?: string }
	| { error: string }
	| { stall: true }
	| { waitForFile: string; then: FauxStep }
	| { delayMs: number; then: FauxStep };

/**
 * The first rule whose `match` occurs in the latest user message answers. Its steps are played in
 * order across the turns of one run: step N answers the request that follows N assistant messages
 * after that user message (the last step repeats).
 */
export interface FauxRule {
	match?: string;
	steps: FauxStep[];
}

export interface FauxScript {
	rules: FauxRule[];
	fallback?: FauxStep[];
}

function agentDir(): string {
	const dir = process.env.PI_CODING_AGENT_DIR;
	if (!dir) throw new Error("faux model: PI_CODING_AGENT_DIR is not set");
	return dir;
}

function readScript(): FauxScript {
	const file = join(agentDir(), "faux-script.json");
	if (!existsSync(file)) return { rules: [], fallback: [{ text: "ok" }] };
	return JSON.parse(readFileSync(file, "utf8")) as FauxScript;
}

function textOf(message: Message): string {
	if (message.role === "assistant") {
		return message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
	}
	const content = message.content;
	if (typeof content === "string") return content;
	return content.map((block) => (block.type === "text" ? block.text : "")).join("");
}

let callSeq = 0;
function recordCall(messages: Message[], modelId: string): void {
	const dir = join(agentDir(), "faux-calls");
	mkdirSync(dir, { recursive: true });
	callSeq += 1;
	const name = `${Date.now()}-${process.pid}-${String(callSeq).padStart(4, "0")}.json`;
	const tmp = join(dir, `.${name}.tmp`);
	writeFileSync(tmp, JSON.stringify({ pid: process.pid, seq: callSeq, at: Date.now(), model: modelId, messages }));
	renameSync(tmp, join(dir, name));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
	return new Promise((resolve) => {
		const timer = setTimeout(resolve, ms);
		signal?.addEventListener("abort", () => {
			clearTimeout(timer);
			resolve();
		});
	});
}

async function play(step: FauxStep, signal: AbortSignal | undefined): Promise<AssistantMessage> {
	if ("stall" in step) {
		while (!signal?.aborted) await sleep(1000, signal);
		return fauxAssistantMessage("", { stopReason: "aborted", errorMessage: "aborted" });
	}
	if ("waitForFile" in step) {
		while (!existsSync(step.waitForFile) && !signal?.aborted) await sleep(50, signal);
		if (signal?.aborted) return fauxAssistantMessage("", { stopReason: "aborted", errorMessage: "aborted" });
		return play(step.then, signal);
	}
	if ("delayMs" in step) {
		await sleep(step.delayMs, signal);
		return play(step.then, signal);
	}
	if ("error" in step) return fauxAssistantMessage("", { stopReason: "error", errorMessage: step.error });
	if ("toolCall" in step) {
		const blocks: FauxContentBlock[] = [];
		if (step.text) blocks.push(fauxText(step.text));
		blocks.push(fauxToolCall(step.toolCall.name, step.toolCall.args));
		return fauxAssistantMessage(blocks, { stopReason: "toolUse" });
	}
	const message = fauxAssistantMessage(step.text);
	if (step.usage) {
		message.usage = {
			...message.usage,
			input: step.usage.input,
			output: step.usage.output,
			totalTokens: step.usage.input + step.usage.output,
		};
	}
	return message;
}

/** One scripted provider; "faux-slow" streams at a human pace so live views can be observed mid-message. */
function registerFaux(
	pi: ExtensionAPI,
	provider: string,
	models: FauxModelDefinition[],
	tokensPerSecond: number,
): void {
	const faux = fauxProvider({ provider, models, tokensPerSecond });
	const respond: FauxResponseFactory = async (context, options, _state, model) => {
		// The faux core consumes one queued response per request; keep exactly one queued.
		faux.appendResponses([respond]);
		recordCall(context.messages, model.id);
		// The step index is the number of assistant messages since the last user message, so a
		// multi-turn rule (tool call, then text) works across processes and resumed sessions.
		let lastUser = -1;
		for (let i = context.messages.length - 1; i >= 0; i--) {
			if (context.messages[i]?.role === "user") {
				lastUser = i;
				break;
			}
		}
		const prompt = lastUser >= 0 ? textOf(context.messages[lastUser] as Message) : "";
		const stepIndex = context.messages.slice(lastUser + 1).filter((m) => m.role === "assistant").length;
		const script = readScript();
		const rule = script.rules.find((candidate) => !candidate.match || prompt.includes(candidate.match));
		const steps = rule?.steps ?? script.fallback ?? [{ text: "ok" }];
		const step = steps[Math.min(stepIndex, steps.length - 1)] ?? { text: "ok" };
		return play(step, options?.signal);
	};
	faux.setResponses([respond]);
	pi.registerProvider(faux.provider);
}

export default function fauxModelExtension(pi: ExtensionAPI): void {
	registerFaux(
		pi,
		"faux",
		[
			{ id: "faux-1", name: "Faux One", contextWindow: 200000, maxTokens: 8192 },
			{ id: "faux-2", name: "Faux Two", reasoning: true, contextWindow: 200000, maxTokens: 8192 },
		],
		100000,
	);
	registerFaux(pi, "faux-slow", [{ id: "slow-1", name: "Faux Slow", contextWindow: 200000, maxTokens: 8192 }], 12);
	// Faster than the status write cap: many deltas per second, so the cap is what limits writes.
	registerFaux(
		pi,
		"faux-stream",
		[{ id: "stream-1", name: "Faux Stream", contextWindow: 200000, maxTokens: 8192 }],
		80,
	);
	// As fast as pi takes it, in pi's usual 3-5 token deltas: megabytes of streamed text for memory benches.
	registerFaux(pi, "faux-bulk", [{ id: "bulk-1", name: "Faux Bulk", contextWindow: 200000, maxTokens: 8192 }], 0);
}
