// Text rules shared by the runner and the extension: question heuristics, sentence cuts, tool
// descriptions and message text extraction. Pure functions, no I/O.

const QUESTION_PATTERNS = [/should i\b/i, /which option/i, /please confirm/i, /need your input/i];

/** Text cut short before its whitespace is collapsed. */
const WINDOW = 2048;

/**
 * Whitespace collapsed to single spaces, trimmed: only the first (or last) WINDOW characters, which is
 * all a one-line summary shows. Collapsing a whole answer of megabytes made a copy of it per event.
 * @param {string} text @param {"start" | "end"} from
 */
export function flatWindow(text, from) {
	const window = text.length <= WINDOW ? text : from === "start" ? text.slice(0, WINDOW) : text.slice(-WINDOW);
	return window.replace(/\s+/g, " ").trim();
}

/** Fallback needs-input detection on the final assistant text. @param {string} text */
export function looksLikeQuestion(text) {
	const trimmed = text.trim();
	if (!trimmed) return false;
	if (trimmed.endsWith("?")) return true;
	return QUESTION_PATTERNS.some((pattern) => pattern.test(trimmed));
}

/** @param {string} text */
export function firstSentence(text) {
	const flat = flatWindow(text, "start");
	const match = /^(.+?[.!?])(\s|$)/.exec(flat);
	const sentence = match?.[1] ?? flat;
	return own(sentence.length > 160 ? `${sentence.slice(0, 157)}...` : sentence, text);
}

/** The end of a streaming text, as much as a summary shows. @param {string} text */
export function lastSentence(text) {
	const flat = flatWindow(text, "end");
	return own(flat.length > 160 ? `...${flat.slice(-157)}` : flat, text);
}

/**
 * A short piece cut from a long string is, in V8, a view that keeps the whole long string alive (a
 * status field holding the start of a 20 MB answer held all 20 MB). Pieces kept beyond the event that
 * brought them are copied out of anything much longer.
 * @param {string} piece @param {string} source @returns {string}
 */
export function own(piece, source) {
	return source.length > 2 * piece.length + 1024 ? String(JSON.parse(JSON.stringify(piece))) : piece;
}

/** @param {string} text @param {number} max */
export function clip(text, max) {
	return text.length > max ? own(`${text.slice(0, max - 3)}...`, text) : text;
}

/** @param {unknown} value @returns {Record<string, unknown>} */
export function obj(value) {
	return value !== null && typeof value === "object" ? /** @type {Record<string, unknown>} */ (value) : {};
}

/** @param {unknown} message */
export function messageText(message) {
	const content = obj(message).content;
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((block) =>
			obj(block).type === "text" && typeof obj(block).text === "string" ? String(obj(block).text) : "",
		)
		.join("");
}

/** Short description of a tool call for the summary line. @param {string} name @param {unknown} args */
export function describeTool(name, args) {
	const a = obj(args);
	const detail = [a.command, a.path, a.file_path, a.pattern, a.question].find((v) => typeof v === "string");
	return clip(detail ? `${name}: ${String(detail).split("\n")[0]}` : name, 120);
}

/** @param {string} text @param {number} max */
export function tail(text, max) {
	return text.length > max ? own(text.slice(-max), text) : text;
}

/**
 * What a failed command said first: its first line that is not a warning (with the indented lines under
 * it) or node's hint. pi warns, then errs, then prints where its docs are: the last line names a docs
 * file, the first error line the cause.
 * @param {string} text
 */
export function firstErrorLine(text) {
	let warning = false;
	for (const line of text.split("\n")) {
		if (!line.trim()) continue;
		if (/^\s/.test(line) && warning) continue;
		warning = /^(warning\b|\(node:\d+\)|\(use `node --trace)/i.test(line.trim());
		if (!warning) return clip(line.trim(), 200);
	}
	return clip(text.trim().split("\n")[0] ?? "", 200);
}
