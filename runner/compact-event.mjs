// Compact form of a worker event for events.jsonl: every event is kept, big payloads are clipped.

const TEXT_CHARS = 2000;

/** @param {unknown} value @returns {Record<string, unknown>} */
function obj(value) {
	return value !== null && typeof value === "object" ? /** @type {Record<string, unknown>} */ (value) : {};
}

/** @param {string} text */
function clip(text) {
	return text.length > TEXT_CHARS ? `${text.slice(0, TEXT_CHARS)}...[${text.length - TEXT_CHARS} more]` : text;
}

/** @param {unknown} content */
function contentText(content) {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content.map((b) => (obj(b).type === "text" ? String(obj(b).text ?? "") : "")).join("");
}

/** @param {unknown} message */
function compactMessage(message) {
	const m = obj(message);
	/** @type {Record<string, unknown>} */
	const out = { role: m.role };
	const text = contentText(m.content);
	if (text) out.text = clip(text);
	if (Array.isArray(m.content)) {
		const calls = m.content.filter((b) => obj(b).type === "toolCall").map((b) => String(obj(b).name));
		if (calls.length) out.toolCalls = calls;
	}
	for (const key of ["stopReason", "errorMessage", "toolName", "isError", "model"])
		if (m[key] !== undefined) out[key] = m[key];
	return out;
}

/** @param {unknown} value */
function clipJson(value) {
	const text = JSON.stringify(value) ?? "";
	return text.length > TEXT_CHARS ? clip(text) : value;
}

/**
 * @param {Record<string, unknown>} event
 * @param {number} seq
 * @param {number} at
 */
export function compactEvent(event, seq, at) {
	/** @type {Record<string, unknown>} */
	// Every line names a type (its reader checks that): a worker's typeless object is logged as "unknown".
	const out = { seq, at, type: typeof event.type === "string" ? event.type : "unknown" };
	switch (event.type) {
		case "message_start":
		case "message_end":
		case "turn_end":
			out.message = compactMessage(event.message);
			break;
		case "message_update": {
			const update = obj(event.assistantMessageEvent);
			out.update = update.type;
			if (typeof update.delta === "string") out.delta = clip(update.delta);
			break;
		}
		case "tool_execution_start":
		case "tool_execution_update":
		case "tool_execution_end":
			out.toolName = event.toolName;
			out.toolCallId = event.toolCallId;
			if (event.args !== undefined) out.args = clipJson(event.args);
			if (event.isError !== undefined) out.isError = event.isError;
			if (event.result !== undefined) out.result = clip(contentText(obj(event.result).content));
			break;
		case "agent_end":
			out.messages = Array.isArray(event.messages) ? event.messages.length : 0;
			break;
		default:
			for (const [key, value] of Object.entries(event)) {
				if (key === "type") continue;
				out[key] = clipJson(value);
			}
	}
	return out;
}
