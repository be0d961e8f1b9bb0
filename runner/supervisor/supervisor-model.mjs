// The supervisor model's judgement: a pi run of its own, `pi --mode json -p --no-session` with no tools,
// no context files, skills or templates, our fixed instructions as its system prompt (a file shipped
// with the package, system-prompt.md) and the request on stdin (never argv). Its reply is untrusted:
// one line of JSON, "answer" or "ask"; anything else is a reason to ask the user.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { askOnce } from "../one-shot.mjs";

export const SYSTEM_PROMPT_FILE = join(dirname(fileURLToPath(import.meta.url)), "system-prompt.md");
/** The marker the request starts with (the scripted model in the tests matches it). */
export const REQUEST_MARKER = "[agent-board supervisor request]";
const ANSWER_CHARS = 4000;
const TASK_CHARS = 2000;
/** A supervisor model slower than this leaves the question to the person (who may answer meanwhile anyway). */
export const MODEL_TIMEOUT_MS = 30_000;

/**
 * @typedef {object} Request
 * @property {import("./rules.mjs").Ask} ask
 * @property {string} words        the rules files' plain words
 * @property {{ id: string, name: string, target?: string, preset?: string, goal: string }} row
 * @property {string[]} transcript recent event lines of the row
 * @property {Array<{ name: string, summary: string }>} others  other live rows
 */

/** @param {string} text @param {number} max */
const clip = (text, max) => (text.length > max ? `${text.slice(0, max)}…` : text);

/** The request, all of it data below the marker. @param {Request} request */
export function requestText(request) {
	const { ask, row } = request;
	const lines = [REQUEST_MARKER, "", "The user's rules (their own words):", request.words.trim() || "(none)", ""];
	lines.push(
		`The agent: row "${row.name}" (${row.id}), on ${row.target ?? "local"}${row.preset ? `, preset ${row.preset}` : ""}.`,
	);
	lines.push("Its task:", clip(row.goal, TASK_CHARS), "");
	if (request.others.length)
		lines.push(
			"Other agents on the board:",
			...request.others.map((other) => `- ${other.name}${other.summary ? `: ${other.summary}` : ""}`),
			"",
		);
	if (request.transcript.length) lines.push("What it did recently:", ...request.transcript, "");
	lines.push("The question:", ask.question);
	if (ask.options?.length) lines.push("Options:", ...ask.options.map((option, i) => `${i + 1}. ${option}`));
	return `${lines.join("\n")}\n`;
}

/**
 * The model's decision from its last assistant text: the last line that is a JSON object.
 * @param {string} text
 * @returns {{ kind: "answer", text: string } | { kind: "ask", why: string } | { kind: "invalid" }}
 */
export function parseDecision(text) {
	const candidates = text
		.split("\n")
		.map((line) =>
			line
				.trim()
				.replace(/^```(json)?|```$/g, "")
				.trim(),
		)
		.filter((line) => line.startsWith("{"));
	for (const line of candidates.reverse()) {
		try {
			const value = JSON.parse(line);
			if (value?.decision === "answer" && typeof value.answer === "string" && value.answer.trim())
				return { kind: "answer", text: clip(value.answer.trim(), ANSWER_CHARS) };
			if ((value?.decision === "ask" || value?.decision === "escalate") && typeof value.why === "string")
				return { kind: "ask", why: clip(value.why.trim() || "the supervisor left it to you", 300) };
		} catch {
			// Not this line.
		}
	}
	return { kind: "invalid" };
}

/**
 * @typedef {{ decision: ReturnType<typeof parseDecision>, tokens: number, cost: number, error?: string, timedOut?: boolean, model?: string }} ModelVerdict
 */

/**
 * Runs the supervisor model once. Never throws: a failure is a verdict with `error` (the user decides then).
 * @param {{ piCommand: string[], model: string, request: string, env: NodeJS.ProcessEnv, cwd: string, timeoutMs?: number, onChild?: (kill: () => void) => void }} options
 * @returns {Promise<ModelVerdict>}
 */
export async function askModel(options) {
	const timeoutMs = options.timeoutMs ?? MODEL_TIMEOUT_MS;
	const answer = await askOnce({
		piCommand: options.piCommand,
		args: ["--no-tools", "-nc", "-ns", "-np", "--system-prompt", SYSTEM_PROMPT_FILE, "--model", options.model],
		request: options.request,
		// Not a worker: no worker role, no ponytail section in its prompt.
		env: { ...options.env, AGENT_BOARD_WORKER: "", AGENT_BOARD_CONTROL_FD: "", PONYTAIL_DEFAULT_MODE: "off" },
		cwd: options.cwd,
		timeoutMs,
		timeoutWords: `the supervisor model did not answer in ${Math.round(timeoutMs / 1000)} s`,
		...(options.onChild ? { onChild: options.onChild } : {}),
	});
	const { text, error, ...rest } = answer;
	return { decision: error ? { kind: "invalid" } : parseDecision(text), ...(error ? { error } : {}), ...rest };
}
