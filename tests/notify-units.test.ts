/** Notifiers' pure parts: the masked URL, the argument parser, each format's request, untrusted text. */
import { describe, expect, it } from "vitest";
import { requestFor } from "../runner/notify/message.mjs";
import { makeNotifier, maskUrl } from "../runner/notify/notifiers.mjs";
import { cleanText } from "../runner/notify/outbox.mjs";
import { rowLink } from "../runner/notify/web-link.mjs";
import { parseNotifyArgs } from "../src/board/subcommands/notify-command.ts";

const event = {
	id: "abc123",
	event: "needs-input",
	rowId: "r1",
	runId: "u1",
	name: "fix the build",
	text: "Which branch?",
	at: Date.UTC(2026, 0, 2, 3, 4, 5),
};

describe("notifiers", () => {
	it("shows a URL as scheme and host, the rest masked", () => {
		expect(maskUrl("https://ntfy.sh/my-secret-topic")).toBe("https://ntfy.sh/***");
		expect(maskUrl("https://user:pw@hooks.slack.com/services/T/B/X?x=1")).toBe("https://hooks.slack.com/***");
		expect(maskUrl("http://127.0.0.1:8080")).toBe("http://127.0.0.1:8080");
		expect(maskUrl("not a url")).toBe("(not a URL)");
	});

	it("parses notify's words and checks a notifier's fields", () => {
		expect(parseNotifyArgs("")).toEqual({ ok: true, notify: { verb: "list" } });
		expect(parseNotifyArgs("add phone https://ntfy.sh/t --format ntfy --on needs-input,failed")).toEqual({
			ok: true,
			notify: { verb: "add", name: "phone", url: "https://ntfy.sh/t", format: "ntfy", on: "needs-input,failed" },
		});
		expect(parseNotifyArgs("add phone")).toMatchObject({ ok: false });
		expect(parseNotifyArgs("remove")).toMatchObject({ ok: false });
		expect(parseNotifyArgs("add a b --bogus")).toMatchObject({ ok: false, error: "unknown option --bogus" });
		expect(makeNotifier({ name: "p", url: "ftp://x/secret" }, 1)).toEqual({
			error: "ftp://x/***: only http and https URLs",
		});
		expect(makeNotifier({ name: "p", url: "https://x/y", format: "sms" }, 1)).toMatchObject({ error: /--format/ });
		expect(makeNotifier({ name: "p", url: "https://x/y", on: "needs-input,later" }, 1)).toMatchObject({
			error: /--on/,
		});
		expect(makeNotifier({ name: "p", url: "https://x/y" }, 1)).toEqual({
			notifier: {
				name: "p",
				url: "https://x/y",
				format: "json",
				on: ["needs-input", "failed", "completed", "budget"],
				addedAt: 1,
			},
		});
	});

	it("strips control characters from untrusted text and keeps it short", () => {
		expect(cleanText("a\u001b[2Jb\u0007c\u202ed\r\ne")).toBe("a[2Jbcd\ne");
		expect(cleanText("x".repeat(5000))).toHaveLength(1000);
	});

	it("builds each format's request with the event's key", () => {
		const url = rowLink("http://127.0.0.1:7777", event);
		expect(url).toBe("http://127.0.0.1:7777/?row=r1&answer=1");
		const ntfy = requestFor("ntfy", event, url);
		expect(ntfy).toEqual({
			headers: {
				"Idempotency-Key": "abc123",
				"X-Event-Id": "abc123",
				"Content-Type": "text/plain; charset=utf-8",
				Title: "agent-board: fix the build needs input",
				Tags: "question",
				Priority: "4",
				Click: url,
			},
			body: "Which branch?",
		});
		expect(requestFor("ntfy", { ...event, name: "réparer" }, undefined).headers.Title).toBe(
			`=?UTF-8?B?${Buffer.from("agent-board: réparer needs input").toString("base64")}?=`,
		);
		expect(JSON.parse(requestFor("json", event, url).body)).toEqual({
			id: "abc123",
			event: "needs-input",
			row: "r1",
			name: "fix the build",
			text: "Which branch?",
			url,
			at: "2026-01-02T03:04:05.000Z",
		});
		expect(JSON.parse(requestFor("slack", { ...event, text: "<!channel> & go" }, undefined).body)).toEqual({
			text: "agent-board: fix the build needs input\n&lt;!channel&gt; &amp; go",
		});
		const discord = JSON.parse(requestFor("discord", { ...event, text: "y".repeat(3000) }, undefined).body);
		expect(discord.content).toHaveLength(2000);
		expect(discord.allowed_mentions).toEqual({ parse: [] });
	});
});
