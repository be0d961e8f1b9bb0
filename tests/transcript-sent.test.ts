/**
 * The messages a user sent, in the transcript where they landed (#28 item 2), and a long streamed
 * reply joined from the tails a run's status carries (item 1): pure view-model functions, on the
 * session shapes a real worker writes (a steer and a follow-up land as user messages, an answer as
 * ask_user's result).
 */
import { describe, expect, it } from "vitest";
import { LIVE_TEXT_CHARS } from "../runner/life/state-rules.mjs";
import { followStream } from "../src/board/view-model/stream-follow.ts";
import { parseTranscript, withSent } from "../src/board/view-model/transcript.ts";

const message = (msg: Record<string, unknown>) => JSON.stringify({ type: "message", message: msg });
const text = (t: string) => [{ type: "text", text: t }];

/** A run with a steer and a follow-up, then a new run whose question is answered in place. */
const SESSION = [
	JSON.stringify({ type: "session", id: "s" }),
	message({ role: "user", content: text("job please") }),
	message({
		role: "assistant",
		content: [
			{ type: "text", text: "Starting." },
			{ type: "toolCall", name: "bash", arguments: { command: "make" } },
		],
	}),
	message({ role: "toolResult", toolName: "bash", content: text("(no output)") }),
	message({ role: "user", content: text("steer text here") }),
	message({ role: "assistant", content: text("ok, steered") }),
	message({ role: "user", content: text("follow up text") }),
	message({ role: "assistant", content: text("ok, followed up") }),
	message({ role: "user", content: text("another run, ask me") }),
	message({
		role: "assistant",
		content: [{ type: "toolCall", name: "ask_user", arguments: { question: "Which?", options: ["A", "B"] } }],
	}),
	message({
		role: "toolResult",
		toolName: "ask_user",
		content: text("The user answered: B please"),
		details: { question: "Which?", options: ["A", "B"], answered: true, answer: "B please" },
	}),
	message({ role: "assistant", content: text("Asked done.") }),
].join("\n");

const receipt = (as: "steer" | "followUp" | "answer", preview: string, at: number) => ({
	id: `m${at}`,
	status: "delivered" as const,
	as,
	at,
	preview,
});

describe("the messages a user sent, in the transcript", () => {
	it("are marked where they landed: steer, follow-up, an answer in ask_user's place, and a reply that began a new run", () => {
		const entries = withSent(
			parseTranscript(SESSION),
			[receipt("steer", "steer text here", 1), receipt("followUp", "follow up text", 2)],
			[receipt("answer", "B please", 3)],
		);
		const users = entries
			.filter((entry) => entry.role === "user")
			.map((entry) => [entry.sent ?? "prompt", entry.text, entry.waiting === true]);
		expect(users).toEqual([
			["prompt", "job please", false],
			["steer", "steer text here", false],
			["followUp", "follow up text", false],
			["reply", "another run, ask me", false],
			["answer", "B please", false],
		]);
		// The answer replaces the tool's own line; the question stays as the tool call.
		expect(entries.some((entry) => entry.text.includes("The user answered"))).toBe(false);
		expect(entries.map((entry) => entry.role)).toEqual([
			"user",
			"assistant",
			"tool",
			"tool",
			"user",
			"assistant",
			"user",
			"assistant",
			"user",
			"tool",
			"user",
			"assistant",
		]);
	});

	it("a steer delivered while a tool runs shows at the end, waiting, until it lands; a long one matches on its preview", () => {
		const long = `please also print the total ${"and the subtotals ".repeat(10)}`;
		const preview = `${long.replace(/\s+/g, " ").slice(0, 77)}...`;
		const before = parseTranscript(SESSION.split("\n").slice(0, 4).join("\n"));
		let entries = withSent(before, [], [receipt("steer", preview, 5)]);
		expect(entries.at(-1)).toEqual({ role: "user", text: preview, sent: "steer", waiting: true });
		const landed = `${SESSION.split("\n").slice(0, 4).join("\n")}\n${message({ role: "user", content: text(long) })}`;
		entries = withSent(parseTranscript(landed), [], [receipt("steer", preview, 5)]);
		expect(entries.at(-1)).toEqual({ role: "user", text: long, sent: "steer" });
		expect(entries.filter((entry) => entry.waiting)).toEqual([]);
	});

	it("an earlier run's message that never landed is not shown as waiting", () => {
		const entries = withSent(parseTranscript(SESSION), [receipt("steer", "lost in a stopped run", 1)], []);
		expect(entries.filter((entry) => entry.waiting)).toEqual([]);
	});
});

describe("a streamed reply followed from its tails", () => {
	const words = Array.from({ length: 900 }, (_, i) => `w${String(i).padStart(3, "0")}`).join(" ");
	const tailAt = (end: number) => words.slice(Math.max(0, end - LIVE_TEXT_CHARS), end);

	it("reads whole from its start when every tail overlaps the one before", () => {
		let seen = "";
		for (let end = 100; end <= words.length; end += 350) seen = followStream(seen, tailAt(end));
		seen = followStream(seen, tailAt(words.length));
		expect(seen).toBe(words);
	});

	it("marks text that went by unseen, and starts again on a new message", () => {
		let seen = followStream("", tailAt(500));
		seen = followStream(seen, tailAt(2500));
		expect(seen).toBe(`${words.slice(0, 500)} … ${tailAt(2500)}`);
		expect(followStream(seen, "A new message.")).toBe("A new message.");
		expect(followStream(seen, "")).toBe("");
	});
});
