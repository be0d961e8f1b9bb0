// Text rules shared by the runner and the extension: question heuristics, sentence cuts, tool
// descriptions and message text extraction. Pure functions, no I/O.

const QUESTION_PATTERNS = [/should i\b/i, /which option/i, /please confirm/i, /need your input/i];

/** Fallback needs-input detection on the final assistant text. @param {string} text */
export function looksLikeQuestion(text) {
	const trimmed = text.trim();
	if (!trimmed) return false;
	if (trimmed.endsWith("?")) return true;
	return QUESTION_PATTERNS.some((pattern) => pattern.test(trimmed));
}

/** @param {string} text */
export function firstSentence(text) {
	const flat = text.replace(/\s+/g, " ").trim();
	const match = /^(.+?[.!?])(\s|$)/.exec(flat);
	const sentence = match?.[1] ?? flat;
	return sentence.length > 160 ? `${sentence.slice(0, 157)}...` : sentence;
}

/** The end of a streaming text, as much as a summary shows. @param {string} text */
export function lastSentence(text) {
	const flat = text.replace(/\s+/g, " ").trim();
	return flat.length > 160 ? `...${flat.slice(-157)}` : flat;
}

/** @param {string} text @param {number} max */
export function clip(text, max) {
	return text.length > max ? `${text.slice(0, max - 3)}...` : text;
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
		.map((block) => (obj(block).type === "text" && typeof obj(block).text === "string" ? String(obj(block).text) : ""))
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
	return text.length > max ? text.slice(-max) : text;
}

/** @param {string} text */
export function lastLine(text) {
	const lines = text.split("\n").map((l) => l.trim()).filter(Boolean);
	return clip(lines[lines.length - 1] ?? "", 200);
}
