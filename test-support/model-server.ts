/**
 * A scripted model behind a real OpenAI-compatible chat completions endpoint on 127.0.0.1 (SSE
 * streaming), for pi processes the test cannot load an extension into: workers on an ssh host or in a
 * container (`--network host`). Same step vocabulary as the faux model (test-support/faux-script.ts):
 * the first rule whose `match` occurs in the latest user message answers, step N answers the request
 * that follows N assistant messages after it. Every request is recorded with the time it arrived; a
 * test can hold every response until it says go.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import type { FauxScript, FauxStep } from "./faux-script.ts";
import { waitFor } from "./pi-harness.ts";

export const LOOPBACK_PROVIDER = "loopback";
export const LOOPBACK_MODEL = "scripted-1";

interface ChatMessage {
	role: string;
	content?: unknown;
	tool_calls?: unknown[];
}

export interface ModelRequest {
	at: number;
	model: string;
	authorization: string;
	messages: ChatMessage[];
	/** Text of the latest user message (what rules match on). */
	prompt: string;
	tools: string[];
	/** Each streamed text part as it was written to the socket (what a bench times status against). */
	sent: { at: number; text: string }[];
}

export interface ModelServer {
	/** baseUrl for models.json: http://127.0.0.1:<port>/v1 */
	url: string;
	port: number;
	apiKey: string;
	setScript(script: FauxScript): void;
	requests(): ModelRequest[];
	waitForRequest(
		predicate: (request: ModelRequest) => boolean,
		what: string,
		timeoutMs?: number,
	): Promise<ModelRequest>;
	/** Responses to requests from now on wait until the returned function is called (requests are recorded at once). */
	hold(): () => void;
	/** The provider entry for models.json (no key: the key lives in auth.json). */
	modelsJson(): Record<string, unknown>;
	/** The credential entry for auth.json. */
	authJson(): Record<string, unknown>;
	/** settings.json defaults that select the scripted model with retries off. */
	settingsJson(): Record<string, unknown>;
	close(): Promise<void>;
}

export interface ModelServerOptions {
	script?: FauxScript;
	/** Pause between streamed text chunks (live text tests). */
	chunkDelayMs?: number;
}

function textOf(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((part) =>
			part && typeof part === "object" && (part as { type?: unknown }).type === "text"
				? String((part as { text?: unknown }).text ?? "")
				: "",
		)
		.join("");
}

function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Splits text into a few streamed chunks on word boundaries. */
function chunks(text: string): string[] {
	const words = text.split(/(?<=\s)/);
	const size = Math.max(1, Math.ceil(words.length / 4));
	const out: string[] = [];
	for (let i = 0; i < words.length; i += size) out.push(words.slice(i, i + size).join(""));
	return out.length ? out : [""];
}

export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
	let script: FauxScript = options.script ?? { rules: [], fallback: [{ text: "ok" }] };
	const recorded: ModelRequest[] = [];
	const apiKey = `loopback-${randomBytes(8).toString("hex")}`;
	let gate: Promise<void> | undefined;
	let completion = 0;

	const pickStep = (messages: ChatMessage[]): { step: FauxStep; prompt: string } => {
		let lastUser = -1;
		for (let i = messages.length - 1; i >= 0; i--) {
			if (messages[i]?.role === "user") {
				lastUser = i;
				break;
			}
		}
		const prompt = lastUser >= 0 ? textOf(messages[lastUser]?.content) : "";
		const index = messages.slice(lastUser + 1).filter((m) => m.role === "assistant").length;
		const rule = script.rules.find((candidate) => !candidate.match || prompt.includes(candidate.match));
		const steps = rule?.steps ?? script.fallback ?? [{ text: "ok" }];
		return { step: steps[Math.min(index, steps.length - 1)] ?? { text: "ok" }, prompt };
	};

	const play = async (
		step: FauxStep,
		model: string,
		res: ServerResponse,
		closed: () => boolean,
		record: ModelRequest,
	): Promise<void> => {
		if ("stall" in step) {
			while (!closed()) await sleep(100);
			return;
		}
		if ("waitForFile" in step) {
			while (!existsSync(step.waitForFile) && !closed()) await sleep(50);
			if (!closed()) await play(step.then, model, res, closed, record);
			return;
		}
		if ("delayMs" in step) {
			await sleep(step.delayMs);
			if (!closed()) await play(step.then, model, res, closed, record);
			return;
		}
		if ("error" in step) {
			res.writeHead(400, { "content-type": "application/json" });
			res.end(JSON.stringify({ error: { message: step.error, type: "invalid_request_error" } }));
			return;
		}
		completion += 1;
		const id = `chatcmpl-${completion}`;
		const created = Math.floor(Date.now() / 1000);
		const send = (choice: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}): void => {
			res.write(
				`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: choice ? [{ index: 0, ...choice }] : [], ...extra })}\n\n`,
			);
		};
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
		const text = step.text;
		if (text) {
			let first = true;
			for (const part of chunks(text)) {
				send({ delta: first ? { role: "assistant", content: part } : { content: part }, finish_reason: null });
				record.sent.push({ at: Date.now(), text: part });
				first = false;
				if (options.chunkDelayMs) await sleep(options.chunkDelayMs);
				if (closed()) return;
			}
		}
		if ("toolCall" in step) {
			const call = {
				index: 0,
				id: `call_${completion}`,
				type: "function",
				function: { name: step.toolCall.name, arguments: JSON.stringify(step.toolCall.args) },
			};
			send({ delta: { role: "assistant", tool_calls: [call] }, finish_reason: null });
		}
		send({ delta: {}, finish_reason: "toolCall" in step ? "tool_calls" : "stop" });
		const usage = "usage" in step && step.usage ? step.usage : { input: 10, output: 5 };
		send(undefined, {
			usage: {
				prompt_tokens: usage.input,
				completion_tokens: usage.output,
				total_tokens: usage.input + usage.output,
			},
		});
		res.end("data: [DONE]\n\n");
	};

	const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
		const at = Date.now();
		let body = "";
		for await (const chunk of req) body += String(chunk);
		if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
			res.writeHead(404).end();
			return;
		}
		let parsed: { model?: string; messages?: ChatMessage[]; tools?: { function?: { name?: string } }[] };
		try {
			parsed = JSON.parse(body) as typeof parsed;
		} catch {
			res.writeHead(400).end();
			return;
		}
		const messages = Array.isArray(parsed.messages) ? parsed.messages : [];
		const { step, prompt } = pickStep(messages);
		const model = String(parsed.model ?? "");
		const authorization = String(req.headers.authorization ?? "");
		const record: ModelRequest = {
			at,
			model,
			authorization,
			messages,
			prompt,
			tools: (parsed.tools ?? []).map((t) => String(t.function?.name ?? "")),
			sent: [],
		};
		recorded.push(record);
		if (authorization !== `Bearer ${apiKey}`) {
			res.writeHead(401, { "content-type": "application/json" });
			res.end(
				JSON.stringify({
					error: { message: "loopback model: wrong or missing api key", type: "authentication_error" },
				}),
			);
			return;
		}
		let gone = false;
		res.on("close", () => (gone = true));
		if (gate) await gate;
		await play(step, model, res, () => gone, record);
	};

	const server = createServer((req, res) => {
		handle(req, res).catch((error: unknown) => {
			if (!res.headersSent) res.writeHead(500);
			res.end(String(error));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	const port = (server.address() as AddressInfo).port;
	const url = `http://127.0.0.1:${port}/v1`;

	return {
		url,
		port,
		apiKey,
		setScript(next) {
			script = next;
		},
		requests: () => [...recorded],
		waitForRequest(predicate, what, timeoutMs = 30_000) {
			return waitFor(() => recorded.find(predicate), `model request: ${what}`, timeoutMs);
		},
		hold() {
			let release = (): void => undefined;
			const held = new Promise<void>((resolve) => (release = resolve));
			gate = held;
			return () => {
				if (gate === held) gate = undefined;
				release();
			};
		},
		modelsJson: () => ({
			providers: {
				[LOOPBACK_PROVIDER]: {
					baseUrl: url,
					api: "openai-completions",
					compat: { supportsStore: false, supportsDeveloperRole: false, maxTokensField: "max_tokens" },
					models: [
						{
							id: LOOPBACK_MODEL,
							name: "Loopback Scripted",
							contextWindow: 200000,
							maxTokens: 8192,
							cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
						},
					],
				},
			},
		}),
		authJson: () => ({ [LOOPBACK_PROVIDER]: { type: "api_key", key: apiKey } }),
		settingsJson: () => ({
			defaultProvider: LOOPBACK_PROVIDER,
			defaultModel: LOOPBACK_MODEL,
			retry: { enabled: false },
			quietStartup: true,
		}),
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}

/** A pi agent dir (models, auth, settings) whose default model is this server's: the board's, for a target's runs. */
export function writeAgentDir(model: ModelServer, dir: string): string {
	mkdirSync(dir, { recursive: true });
	writeFileSync(join(dir, "models.json"), JSON.stringify(model.modelsJson()));
	writeFileSync(join(dir, "auth.json"), JSON.stringify(model.authJson()));
	writeFileSync(join(dir, "settings.json"), JSON.stringify(model.settingsJson()));
	return dir;
}
