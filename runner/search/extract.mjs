// What of a row goes into the index, as (field, text) pieces: pure, from what the indexer read. A piece is
// one message, one tool call or one tool output, so a hit says where it matched and its snippet is that
// piece's words. Every file here may have been written by a worker: anything not of the expected shape is
// skipped, never trusted.
import { indexText } from "./text.mjs";

/** A piece's text is cut here: a tool's output can be megabytes, and its head says what it was. */
export const MAX_PIECE_CHARS = 64 * 1024;

/** @typedef {{ field: string, body: string }} Piece */

/** @param {unknown} value @returns {value is Record<string, unknown>} */
const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);

/** @param {string} field @param {string} body @returns {Piece[]} */
function piece(field, body) {
	const text = indexText(body.length > MAX_PIECE_CHARS ? body.slice(0, MAX_PIECE_CHARS) : body).trim();
	return text ? [{ field, body: text }] : [];
}

/** The text parts of a message's content (a string, or parts of type text). @param {unknown} content */
function contentText(content) {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.filter((part) => isObject(part) && part.type === "text" && typeof part.text === "string")
		.map((part) => /** @type {string} */ (/** @type {Record<string, unknown>} */ (part).text))
		.join("\n");
}

/** A tool call's arguments as words: strings as they are, the rest as JSON. @param {unknown} args */
function argumentText(args) {
	if (!isObject(args)) return typeof args === "string" ? args : "";
	return Object.entries(args)
		.map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`)
		.join("\n");
}

/**
 * The pieces of one line of a pi session file (session-format.md): prompts and messages the person sent,
 * the agent's text, each tool call with its arguments, each tool's output (an error's as such), ask_user's
 * question and answer, a compaction's summary, a failed request's error.
 * @param {unknown} entry @returns {Piece[]}
 */
export function sessionPieces(entry) {
	if (!isObject(entry)) return [];
	if (entry.type === "compaction" && typeof entry.summary === "string") return piece("summary", entry.summary);
	if (entry.type !== "message" || !isObject(entry.message)) return [];
	const message = entry.message;
	if (message.role === "user") return piece("prompt", contentText(message.content));
	if (message.role === "assistant") {
		/** @type {Piece[]} */
		const pieces = [];
		const parts = Array.isArray(message.content) ? message.content : [];
		for (const part of parts) {
			if (!isObject(part)) continue;
			if (part.type === "text" && typeof part.text === "string") pieces.push(...piece("text", part.text));
			else if (part.type === "toolCall" && typeof part.name === "string") {
				if (part.name === "ask_user" && isObject(part.arguments)) {
					const { question, options } = part.arguments;
					const choices = Array.isArray(options) ? options.filter((o) => typeof o === "string").join(" / ") : "";
					pieces.push(
						...piece("question", [question, choices].filter((t) => typeof t === "string" && t).join("\n")),
					);
				} else pieces.push(...piece("tool call", `${part.name} ${argumentText(part.arguments)}`));
			}
		}
		if (typeof message.errorMessage === "string") pieces.push(...piece("error", message.errorMessage));
		return pieces;
	}
	if (message.role === "toolResult") {
		const text = contentText(message.content);
		if (message.toolName === "ask_user") {
			const details = isObject(message.details) ? message.details : {};
			const answer = typeof details.answer === "string" ? details.answer : "";
			return answer ? piece("answer", answer) : [];
		}
		const name = typeof message.toolName === "string" ? `${message.toolName}: ` : "";
		return piece(message.isError === true ? "tool error" : "tool output", `${name}${text}`);
	}
	return [];
}

/**
 * @typedef {object} RowFacts  what the indexer read of a row besides its session
 * @property {Record<string, unknown>} meta
 * @property {Record<string, unknown> | undefined} status  the current run's status.json
 * @property {string[]} files  the files it changed (touched.json)
 * @property {string} [prompt]  the current run's prompt (run.json), while the session has none yet
 */

/** Where a row runs: "local", its target, or "pool/member" once a pool placed it. @param {RowFacts} facts */
export function placeOf(facts) {
	const target = typeof facts.meta.target === "string" && facts.meta.target ? facts.meta.target : "local";
	const link = isObject(facts.status?.link) ? facts.status.link : undefined;
	const host = typeof link?.target === "string" ? link.target : "";
	return host && host !== target ? `${target}/${host}` : target;
}

/** The row's own pieces (replaced whenever its meta, status or changed files change). @param {RowFacts} facts @returns {Piece[]} */
export function rowPieces(facts) {
	const { meta, status } = facts;
	const str = (/** @type {unknown} */ value) => (typeof value === "string" ? value : "");
	return [
		...piece("name", str(meta.name)),
		...piece("place", placeOf(facts)),
		...piece("preset", str(meta.preset)),
		...piece("state", str(status?.state).replace(/_/g, " ")),
		...piece("error", str(status?.error)),
		...piece("question", status?.state === "needs_input" ? str(status?.question) : ""),
		...piece("files", facts.files.join("\n")),
		...piece("prompt", facts.prompt ?? ""),
	];
}

/**
 * A line of supervisor.log as pieces of its row: who answered (the supervisor, by which rule) and what.
 * @param {unknown} line @returns {{ row: string, pieces: Piece[] } | undefined}
 */
export function supervisorPieces(line) {
	if (!isObject(line) || typeof line.row !== "string" || typeof line.question !== "string") return undefined;
	const rule = typeof line.rule === "string" ? line.rule : "";
	if (line.decision === "answered" && typeof line.answer === "string")
		return { row: line.row, pieces: piece("supervisor answer", `${line.answer}\n(${rule}: ${line.question})`) };
	if (typeof line.note === "string")
		return { row: line.row, pieces: piece("supervisor note", `${line.note}\n${line.question}`) };
	return undefined;
}
