/**
 * Fault battery, round two (issue #20), the parts without pi: the line splitter with a line of
 * megabytes in many chunks, joined stream deltas in events.jsonl (case 6), and the runner's files on a
 * disk that refuses every write (/dev/full: ENOSPC), which must never throw (case 1).
 */
import {
	existsSync,
	linkSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readFileSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EventLog } from "../runner/event-log.mjs";
import { BIG_LINE, ClippedJson, JsonLines, MAX_STRING } from "../runner/json-lines.mjs";
import { LineSplitter } from "../runner/lines.mjs";
import { PENDING_EVENT_BYTES, RunFiles } from "../runner/run-files.mjs";
import { initialStatus } from "../runner/life/state-rules.mjs";
import { appendSpend, dayOf, spendDir } from "../runner/life/spend-ledger.mjs";
import { appendSupervisorLine, supervisorLogPath } from "../runner/supervisor/supervisor-log.mjs";

const roots: string[] = [];
afterAll(() => {
	for (const root of roots) rmSync(root, { recursive: true, force: true });
});

describe("runner lines and event log", () => {
	it("joins a line of megabytes from many chunks once, and drops a line over maxLine whole", () => {
		const big = JSON.stringify({ type: "message_end", text: "x".repeat(5 * 1024 * 1024) });
		const splitter = new LineSplitter();
		const lines: string[] = [];
		const stream = `{"a":1}\n${big}\n{"b":2}\n`;
		for (let at = 0; at < stream.length; at += 65536) lines.push(...splitter.push(stream.slice(at, at + 65536)));
		expect(lines.map((line) => line.length)).toEqual([7, big.length, 7]);
		expect(lines[1]).toBe(big);

		const bounded = new LineSplitter({ maxLine: 100 });
		const out = [
			...bounded.push(`${"y".repeat(80)}`),
			...bounded.push(`${"y".repeat(80)}`),
			...bounded.push(`${"y".repeat(80)}\nnext\n`),
		];
		expect(out).toEqual(["next"]);
		expect(bounded.flush()).toBe("");
	});

	it("logs a burst of stream deltas as one line, every other event as its own, numbered line by line", () => {
		const lines: string[] = [];
		const log = new EventLog((line) => lines.push(line));
		const delta = (text: string) => ({
			type: "message_update",
			assistantMessageEvent: { type: "text_delta", delta: text },
		});
		log.add({ type: "message_start", message: { role: "assistant", content: [] } }, 1);
		for (const [index, word] of ["Hel", "lo, ", "wor", "ld."].entries()) log.add(delta(word), 2 + index);
		log.add({ type: "message_update", assistantMessageEvent: { type: "thinking_delta", delta: "hmm" } }, 6);
		log.add(
			{ type: "message_end", message: { role: "assistant", content: [{ type: "text", text: "Hello, world." }] } },
			7,
		);
		log.add(delta("tail"), 8);
		log.flush();
		const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
		expect(parsed.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5]);
		expect(parsed.map((event) => event.type)).toEqual([
			"message_start",
			"message_update",
			"message_update",
			"message_end",
			"message_update",
		]);
		expect(parsed[1]).toEqual({
			seq: 2,
			at: 5,
			from: 2,
			type: "message_update",
			update: "text_delta",
			delta: "Hello, world.",
			deltas: 4,
		});
		expect(parsed[2]).toMatchObject({ update: "thinking_delta", delta: "hmm", deltas: 1 });
		expect(parsed[4]).toMatchObject({ delta: "tail", deltas: 1 });
	});
});

describe("pi's stdout as the runner reads it", () => {
	const sample = {
		type: "message_end",
		message: {
			role: "assistant",
			content: [{ type: "text", text: 'line "one"\n\ttab \\ slash \u00e9\u6f22\ud83d\ude80 \u2028 end' }],
			usage: { input: 12, output: -3.5e2, cost: { total: 0.25 } },
			stopReason: "stop",
			errorMessage: null,
			ok: true,
			no: false,
			list: [1, [2, {}], []],
		},
	};

	it("gives small and big lines the same events JSON.parse does, whatever the chunking, and clips only strings past the bound", () => {
		const big = {
			...sample,
			message: { ...sample.message, content: [{ type: "text", text: `${"z".repeat(BIG_LINE)}"\u00e9 tail` }] },
		};
		const stream = `${JSON.stringify(sample)}\nnot json\n${JSON.stringify(big)}\r\n${JSON.stringify({ type: "agent_settled" })}`;
		for (const size of [1, 7, 4096, 65536]) {
			const reader = new JsonLines();
			const events: Record<string, unknown>[] = [];
			for (let at = 0; at < stream.length; at += size) events.push(...reader.push(stream.slice(at, at + size)));
			const last = reader.flush();
			if (last) events.push(last);
			expect(events, `chunks of ${size}`).toHaveLength(3);
			expect(events[0]).toEqual(sample);
			expect(events[2]).toEqual({ type: "agent_settled" });
			const clipped = events[1] as typeof big;
			expect({ ...clipped, message: { ...clipped.message, content: [] } }).toEqual({
				...big,
				message: { ...big.message, content: [] },
			});
			expect(clipped.message.content[0]?.text).toBe("z".repeat(MAX_STRING));
		}
		const parser = new ClippedJson(8);
		parser.push('{"a": "0123456789", "b": [true, null, -1.5e3]}');
		expect(parser.end()).toEqual({ a: "01234567", b: [true, null, -1500] });
		for (const broken of ['{"a": tru}', '{"a": 1', '"open', "}"]) {
			const bad = new ClippedJson();
			bad.push(broken);
			expect(bad.end(), broken).toBeUndefined();
		}
	});
});

describe("runner files on a disk that refuses writes", () => {
	it("never throws: status, events, receipts and records wait in memory (bounded), later events are counted as dropped", () => {
		const runDir = mkdtempSync(join(tmpdir(), "pab-full-"));
		roots.push(runDir);
		const files = new RunFiles({ runDir, storeDir: runDir, rowId: "row" });
		// The files the runner appends to are open on /dev/full: each write fails with ENOSPC, as on a full disk.
		files.events.fd = openSync("/dev/full", "w");
		files.stderr.fd = openSync("/dev/full", "w");
		const logged: string[] = [];
		files.log = (text: string) => void logged.push(text);
		const line = `${JSON.stringify({ seq: 1, at: 1, type: "message_update", delta: "z".repeat(1000) })}\n`;
		const lines = Math.ceil(PENDING_EVENT_BYTES / line.length) + 10;
		for (let n = 0; n < lines; n++) files.appendEvent(line);
		expect(files.problem).toBe(`${join(runDir, "events.jsonl")}: ENOSPC`);
		files.appendStderr("some stderr\n");
		expect(files.diskFull).toBe(true);
		expect(files.pendingBytes).toBeLessThanOrEqual(PENDING_EVENT_BYTES);
		expect(files.pendingEvents.length + files.droppedEvents).toBe(lines);
		expect(files.droppedEvents).toBeGreaterThan(0);
		expect(files.droppedStderrBytes).toBe("some stderr\n".length);
		// Said once, not once per failed write.
		expect(logged).toEqual([
			`cannot write ${join(runDir, "events.jsonl")}: ENOSPC; the run goes on and writes it when it can`,
		]);
		// status.json itself can be written here: the waiting events are tried again (and still wait).
		expect(files.writeStatus(initialStatus("run", "row", 1))).toBe(true);
		expect(JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")).runId).toBe("run");
		expect(files.pendingEvents.length).toBeGreaterThan(0);
		files.close();
	});
});

describe("runner files planted before the runner opened them", () => {
	it("a symlink as events.jsonl, a hard link as stderr.log: nothing goes through it, nothing waits for it, the run is refused naming the file once", () => {
		const runDir = mkdtempSync(join(tmpdir(), "pab-planted-"));
		roots.push(runDir);
		const outside = join(runDir, "outside");
		writeFileSync(outside, "secret\n");
		symlinkSync(outside, join(runDir, "events.jsonl"));
		const refused: string[] = [];
		const files = new RunFiles({ runDir, storeDir: runDir, rowId: "row" }, (problem) => void refused.push(problem));
		files.log = () => undefined;
		expect(files.openAll()).toBe("events.jsonl: is a symbolic link (not followed)");
		files.appendEvent(`${JSON.stringify({ seq: 1, at: 1, type: "agent_start" })}\n`);
		files.flushEvents();
		expect(readFileSync(outside, "utf8")).toBe("secret\n");
		expect([files.pendingEvents.length, files.problem, files.diskFull]).toEqual([0, undefined, false]);
		expect(refused).toEqual(["events.jsonl: is a symbolic link (not followed)"]);
		// stderr.log itself was opened as the plain file it is.
		files.appendStderr("err\n");
		expect(readFileSync(join(runDir, "stderr.log"), "utf8")).toBe("err\n");
		files.close();

		// A hard link to a file elsewhere is another name for it: refused too.
		const linked = mkdtempSync(join(tmpdir(), "pab-planted-"));
		roots.push(linked);
		writeFileSync(join(linked, "elsewhere"), "secret\n");
		linkSync(join(linked, "elsewhere"), join(linked, "stderr.log"));
		const second = new RunFiles({ runDir: linked, storeDir: linked, rowId: "row" });
		second.log = () => undefined;
		expect(second.openAll()).toBe("stderr.log: has 2 hard links (another name for a file elsewhere)");
		second.appendStderr("err\n");
		expect(readFileSync(join(linked, "elsewhere"), "utf8")).toBe("secret\n");
		expect(existsSync(join(linked, "events.jsonl"))).toBe(true);
		second.close();
	});
});

describe("store logs planted before they are appended to", () => {
	it("supervisor.log and the day's spend ledger as symlinks: refused naming the file, nothing written through them", () => {
		const storeDir = mkdtempSync(join(tmpdir(), "pab-planted-logs-"));
		roots.push(storeDir);
		const outside = join(storeDir, "outside");
		writeFileSync(outside, "secret\n");
		symlinkSync(outside, supervisorLogPath(storeDir));
		expect(() =>
			appendSupervisorLine(storeDir, {
				at: 1,
				row: "row",
				run: "run",
				call: "c1",
				question: "q",
				rule: "model",
				decision: "asked-you",
				ms: 1,
			}),
		).toThrow("supervisor.log: is a symbolic link (not followed)");
		const at = Date.now();
		mkdirSync(spendDir(storeDir));
		symlinkSync(outside, join(spendDir(storeDir), `${dayOf(at)}.jsonl`));
		expect(() => appendSpend(storeDir, { row: "row", run: "run", at, tokens: 5, cost: 0 })).toThrow(
			`${dayOf(at)}.jsonl: is a symbolic link (not followed)`,
		);
		expect(readFileSync(outside, "utf8")).toBe("secret\n");
		// A plain file goes on as before: the ledger is written, private.
		rmSync(join(spendDir(storeDir), `${dayOf(at)}.jsonl`));
		appendSpend(storeDir, { row: "row", run: "run", at, tokens: 5, cost: 0 });
		expect(readFileSync(join(spendDir(storeDir), `${dayOf(at)}.jsonl`), "utf8")).toContain('"tokens":5');
		expect(statSync(join(spendDir(storeDir), `${dayOf(at)}.jsonl`)).mode & 0o777).toBe(0o600);
	});
});
