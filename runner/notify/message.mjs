// What each format posts for an event (pure). `json`: {"id","event","row","name","text","url","at"};
// `ntfy`: the text as the body with Title, Tags, Priority and Click headers (docs.ntfy.sh/publish);
// `slack`: an incoming webhook's {"text"} (&, <, > escaped as Slack asks, so a model's text can
// mention nobody); `discord`: a webhook's {"content"} (at most 2000 characters, no mentions parsed).
// Every request carries the event's key as Idempotency-Key and X-Event-Id.

const HEADLINES = {
	"needs-input": "needs input",
	failed: "failed",
	completed: "completed",
	budget: "paused: budget reached",
	answered: "answered by the supervisor",
};
const NTFY = {
	"needs-input": { tags: "question", priority: "4" },
	failed: { tags: "x", priority: "4" },
	completed: { tags: "white_check_mark", priority: "3" },
	budget: { tags: "moneybag", priority: "4" },
	answered: { tags: "robot", priority: "2" },
};

/** "agent-board: <row> needs input". @param {import("./outbox.mjs").OutboxEvent} event */
export function headline(event) {
	const what = HEADLINES[/** @type {keyof typeof HEADLINES} */ (event.event)] ?? event.event;
	return `agent-board: ${event.name || event.rowId} ${what}`;
}

/** A header value: printable ASCII as is, anything else as an RFC 2047 encoded word (ntfy decodes it). @param {string} text */
function headerValue(text) {
	return /^[\x20-\x7e]*$/.test(text) ? text : `=?UTF-8?B?${Buffer.from(text, "utf8").toString("base64")}?=`;
}

/** @param {string} text */
const slackEscape = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * @param {import("./notifiers.mjs").Notifier["format"]} format @param {import("./outbox.mjs").OutboxEvent} event
 * @param {string | undefined} url the row on the web page, when the web view runs
 * @returns {{ headers: Record<string, string>, body: string }}
 */
export function requestFor(format, event, url) {
	const keyed = { "Idempotency-Key": event.id, "X-Event-Id": event.id };
	const title = headline(event);
	if (format === "ntfy") {
		const style = NTFY[/** @type {keyof typeof NTFY} */ (event.event)] ?? { tags: "robot", priority: "3" };
		return {
			headers: {
				...keyed,
				"Content-Type": "text/plain; charset=utf-8",
				Title: headerValue(title),
				Tags: style.tags,
				Priority: style.priority,
				...(url ? { Click: url } : {}),
			},
			body: event.text || title,
		};
	}
	const json = { ...keyed, "Content-Type": "application/json" };
	const line = [title, event.text, url].filter(Boolean).join("\n");
	if (format === "slack") return { headers: json, body: JSON.stringify({ text: slackEscape(line) }) };
	if (format === "discord") {
		const content = line.length > 2000 ? `${line.slice(0, 1999)}…` : line;
		return { headers: json, body: JSON.stringify({ content, allowed_mentions: { parse: [] } }) };
	}
	return {
		headers: json,
		body: JSON.stringify({
			id: event.id,
			event: event.event,
			row: event.rowId,
			name: event.name,
			text: event.text,
			url: url ?? null,
			at: new Date(event.at).toISOString(),
		}),
	};
}
