/**
 * The streamed words' file (runner/live-words.mjs): what the runner appends, what a reader takes from its end
 * (the newest message only, torn and odd lines skipped, nothing through a planted file), and which of the
 * words and the status a reader shows.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readWords, withWords, WORDS_DIR, WORDS_FILE, WordsFollower, WordsWriter } from "../runner/live-words.mjs";
import { applyEvent, initialStatus, LIVE_TEXT_CHARS } from "../runner/life/state-rules.mjs";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function runDirs(): { runDir: string; storeDir: string } {
	const storeDir = mkdtempSync(join(tmpdir(), "pab-words-"));
	dirs.push(storeDir);
	return { runDir: storeDir, storeDir };
}

const line = (m: number, at: number, t: string): string => `${JSON.stringify({ m, at, t })}\n`;
const start = { type: "message_start", message: { role: "assistant" } };
const delta = (text: string) => ({
	type: "message_update",
	assistantMessageEvent: { type: "text_delta", delta: text },
});
const end = { type: "message_end", message: { role: "assistant", content: [] } };

function working(now: number) {
	const status = initialStatus("run-1", "row-1", now);
	applyEvent(status, { type: "agent_start" }, now);
	return status;
}

describe("words.jsonl as a reader takes it", () => {
	function wordsFile(text: string): string {
		const { runDir } = runDirs();
		writeFileSync(join(runDir, WORDS_FILE), text);
		return runDir;
	}

	it("joins the newest message's lines and leaves older messages out", () => {
		const runDir = wordsFile(line(1, 10, "old answer") + line(2, 20, "new ") + line(2, 30, "answer"));
		expect(readWords(runDir)).toEqual({ text: "new answer", at: 30 });
	});

	it("skips a piece of a line where the read began, a torn last line and lines of the wrong shape", () => {
		const long = line(1, 1, "y".repeat(8000));
		const runDir = wordsFile(`${long}${line(3, 5, "whole")}{"m":3,"at":6,"t":7}\nnot json\n{"m":3,"at":9,"t":"torn`);
		expect(readWords(runDir)).toEqual({ text: "whole", at: 5 });
		expect(readWords(wordsFile(""))).toBeUndefined();
	});

	it("keeps the newest LIVE_TEXT_CHARS of a long message", () => {
		const long = `${"x".repeat(LIVE_TEXT_CHARS)}tail`;
		const read = readWords(wordsFile(line(1, 1, long.slice(0, 500)) + line(1, 2, long.slice(500))));
		expect(read?.text.length).toBe(LIVE_TEXT_CHARS);
		expect(read?.text.endsWith("tail")).toBe(true);
	});

	it("follows the file by offset: what was appended, a torn line once it is whole, a new message afresh", () => {
		const runDir = wordsFile(line(1, 1, "first "));
		const path = join(runDir, WORDS_FILE);
		const follower = new WordsFollower();
		expect(follower.read(runDir)).toEqual({ text: "first ", at: 1 });
		appendFileSync(path, `${line(1, 2, "second ")}{"m":1,"at":3,`);
		expect(follower.read(runDir)).toEqual({ text: "first second ", at: 2 });
		appendFileSync(path, `"t":"third"}\n`);
		expect(follower.read(runDir)).toEqual({ text: "first second third", at: 3 });
		appendFileSync(path, line(2, 4, "next message"));
		expect(follower.read(runDir)).toEqual({ text: "next message", at: 4 });
		// It read only what was appended: a byte changed before its offset is not read again.
		const text = readFileSync(path, "utf8");
		writeFileSync(path, text.replace("first", "FIRST"));
		appendFileSync(path, line(2, 5, " goes on"));
		expect(follower.read(runDir)).toEqual({ text: "next message goes on", at: 5 });
	});

	it("reads nothing through a symlink planted in the file's place", () => {
		const { runDir } = runDirs();
		const elsewhere = join(runDir, "elsewhere.jsonl");
		writeFileSync(elsewhere, line(1, 1, "planted"));
		symlinkSync(elsewhere, join(runDir, WORDS_FILE));
		expect(readWords(runDir)).toBeUndefined();
	});
});

describe("the words or the status", () => {
	it("shows words written after the status's last change, with the tool over and the summary from them", () => {
		const status = working(100);
		applyEvent(status, { type: "tool_execution_start", toolName: "bash", args: { command: "ls" } }, 110);
		const before = JSON.stringify(status);
		const shown = withWords(status, { text: "Now the answer. It goes on", at: 120 });
		expect(shown.live?.text).toBe("Now the answer. It goes on");
		expect(shown.live?.tool).toBeUndefined();
		expect(shown.summary).toBe("Now the answer. It goes on");
		expect(JSON.stringify(status)).toBe(before);
	});

	it("shows the status when it changed after the words, or when the run is not working", () => {
		const status = working(100);
		expect(withWords(status, { text: "older", at: 99 })).toBe(status);
		// A message's last words and the tool it starts, written in the same millisecond: the tool shows.
		const tool = working(100);
		applyEvent(tool, { type: "tool_execution_start", toolName: "bash", args: { command: "sleep 30" } }, 130);
		expect(withWords(tool, { text: "Let me run it.", at: 130 })).toBe(tool);
		const asking = { ...working(100), state: "needs_input" as const };
		expect(withWords(asking, { text: "newer", at: 200 })).toBe(asking);
		const ended = { ...working(100), state: "completed" as const, endedAt: 150 };
		expect(withWords(ended, { text: "newer", at: 200 })).toBe(ended);
		expect(withWords(status, undefined)).toBe(status);
	});
});

describe("the runner's words writer", () => {
	it("appends each message's words under its own number, and the reader takes the newest", async () => {
		const { runDir, storeDir } = runDirs();
		const writer = new WordsWriter({ runDir, storeDir, rowId: "row-1" });
		writer.observe(start);
		writer.observe(delta("first "));
		writer.observe(delta("answer"));
		writer.observe(end);
		writer.observe(start);
		writer.observe(delta("second"));
		await new Promise((resolve) => setTimeout(resolve, 100));
		writer.close();
		const lines = readFileSync(join(runDir, WORDS_FILE), "utf8")
			.trim()
			.split("\n")
			.map((l) => JSON.parse(l) as { m: number; t: string });
		expect(lines.map((l) => [l.m, l.t])).toEqual([
			[1, "first answer"],
			[2, "second"],
		]);
		expect(readWords(runDir)?.text).toBe("second");
		// Every append pokes words/<rowId> in place, so a watcher knows whose words grew.
		expect(readFileSync(join(storeDir, WORDS_DIR, "row-1"), "utf8")).toBe("1");
	});

	it("relays a target's lines stamped with this clock, and a follow begun again starts its message over", () => {
		const { runDir, storeDir } = runDirs();
		const writer = new WordsWriter({ runDir, storeDir, rowId: "row-1" });
		const before = Date.now();
		writer.relay(`${line(4, 1, "far ")}${line(4, 2, "words ")}not a line\n`);
		expect(readWords(runDir)).toMatchObject({ text: "far words " });
		expect(readWords(runDir)?.at).toBeGreaterThanOrEqual(before);
		// The new follow sends the far file's end again: what was relayed is not doubled.
		writer.relay(line(4, 2, "words ") + line(4, 3, "and more"), true);
		expect(readWords(runDir)?.text).toBe("words and more");
		writer.close();
	});

	it("writes nothing through a symlink planted in the file's place, and the run goes on", () => {
		const { runDir, storeDir } = runDirs();
		const target = join(runDir, "target.txt");
		writeFileSync(target, "mine\n");
		symlinkSync(target, join(runDir, WORDS_FILE));
		const writer = new WordsWriter({ runDir, storeDir, rowId: "row-1" });
		writer.observe(start);
		writer.observe(delta("words"));
		writer.flush();
		writer.observe(delta("more"));
		writer.close();
		expect(readFileSync(target, "utf8")).toBe("mine\n");
	});
});
