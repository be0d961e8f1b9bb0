/** Pure rules and file protocols of the engine: live view, in-place questions, lock, queue, slots, inbox. */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { claimMessages, dropMessage, receiptPath, writeReceipt } from "../runner/life/inbox.mjs";
import { MAX_MESSAGE_BYTES } from "../runner/life/reasons.mjs";
import { isAlive, processStartTime, runProcesses, RUN_TAG, signalVerified } from "../runner/store/proc.mjs";
import { claimEntry, enqueue, queuedNames } from "../runner/life/queue.mjs";
import { tryLockRow, withRowLock } from "../runner/store/row-lock.mjs";
import { liveSlots, tryClaimSlot } from "../runner/life/slots.mjs";
import { addReceipt, applyEvent, finalize, initialStatus, runEnded, visibleKey } from "../runner/life/state-rules.mjs";
import { readReceiptFile } from "../src/board/engine/store.ts";
import { waitFor } from "../test-support/wait.ts";

const dirs: string[] = [];
function scratch(): string {
	const dir = mkdtempSync(join(tmpdir(), "pab-units-"));
	dirs.push(dir);
	return dir;
}
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

const delta = (text: string) => ({
	type: "message_update",
	assistantMessageEvent: { type: "text_delta", delta: text },
});

describe("live view rules", () => {
	it("streams text, tells waiting, retrying and compacting apart, and clears it all at the end", () => {
		const s = initialStatus("r", "w", 0);
		applyEvent(s, { type: "agent_start" }, 1);
		applyEvent(s, { type: "turn_start" }, 2);
		expect(s.live?.waitingSince).toBe(2);
		expect(s.summary).toBe("Waiting for the model");
		applyEvent(s, { type: "auto_retry_start", attempt: 2, maxAttempts: 3, errorMessage: "529 overloaded" }, 3);
		expect(s.summary).toBe("Retrying 2/3: 529 overloaded");
		applyEvent(s, { type: "message_start", message: { role: "assistant", content: [] } }, 4);
		applyEvent(s, delta("Reading the parser. "), 5);
		applyEvent(s, delta("Found the bug"), 6);
		expect(s.live).toMatchObject({
			text: "Reading the parser. Found the bug",
			waitingSince: undefined,
			retry: undefined,
		});
		expect(s.summary).toBe("Reading the parser. Found the bug");
		applyEvent(s, delta("x".repeat(2000)), 7);
		expect(s.live?.text?.length).toBe(600);
		applyEvent(s, { type: "compaction_start", reason: "threshold" }, 8);
		expect(s.summary).toBe("Compacting context");
		applyEvent(s, { type: "compaction_end" }, 9);
		applyEvent(s, { type: "tool_execution_start", toolName: "bash", args: { command: "npm test" } }, 10);
		expect(s.live?.tool).toEqual({ name: "bash", detail: "bash: npm test", startedAt: 10 });
		expect(s.summary).toBe("Running bash: npm test");
		applyEvent(s, { type: "tool_execution_end", toolName: "bash" }, 11);
		applyEvent(
			s,
			{
				type: "message_end",
				message: {
					role: "assistant",
					content: [{ type: "text", text: "Fixed it." }],
					stopReason: "stop",
					provider: "faux",
					model: "faux-2",
				},
			},
			12,
		);
		applyEvent(s, { type: "agent_settled" }, 13);
		expect(s.model).toBe("faux/faux-2");
		finalize(s, { code: 0, signal: null, now: 14 });
		expect(s).toMatchObject({ state: "completed", live: undefined, summary: "Fixed it." });
		expect(runEnded(s)).toBe(true);
	});

	it("ask_user is needs_input while the worker waits; an answer returns to working; a parked call ends needs_input", () => {
		const s = initialStatus("r", "w", 0);
		applyEvent(s, { type: "agent_start" }, 1);
		const ask = {
			type: "tool_execution_start",
			toolName: "ask_user",
			args: { question: "Which DB?", options: ["pg", "sqlite"] },
		};
		applyEvent(s, ask, 2);
		expect(s).toMatchObject({ state: "needs_input", question: "Which DB?", questionOptions: ["pg", "sqlite"] });
		expect(runEnded(s)).toBe(false);
		applyEvent(
			s,
			{ type: "tool_execution_end", toolName: "ask_user", result: { details: { answered: true, answer: "pg" } } },
			3,
		);
		expect(s).toMatchObject({ state: "working", question: undefined });
		applyEvent(s, ask, 4);
		applyEvent(s, { type: "tool_execution_end", toolName: "ask_user", result: { details: { parked: true } } }, 5);
		applyEvent(s, { type: "agent_settled" }, 6);
		finalize(s, { code: 0, signal: null, now: 7 });
		expect(s).toMatchObject({ state: "needs_input", question: "Which DB?", parked: true });
	});

	it("visible key ignores counters; receipts are bounded and shown as events", () => {
		const s = initialStatus("r", "w", 0);
		const before = visibleKey(s);
		s.eventCount += 5;
		s.updatedAt = 99;
		expect(visibleKey(s)).toBe(before);
		for (let n = 0; n < 7; n++)
			addReceipt(s, { id: `m${n}`, status: "delivered", as: "steer", at: n, preview: `msg ${n}` });
		expect(s.receipts?.map((r) => r.id)).toEqual(["m2", "m3", "m4", "m5", "m6"]);
		expect(s.recentEvents.at(-1)?.text).toBe("steer delivered: msg 6");
	});
});

describe("engine file protocols", () => {
	it("liveness needs a matching start time; pid 1 or a record without start is never alive or signalled", () => {
		const start = processStartTime(process.pid);
		expect(isAlive(process.pid, start)).toBe(true);
		expect(isAlive(process.pid, undefined)).toBe(false);
		expect(isAlive(1, undefined)).toBe(false);
		expect(isAlive(1, "1")).toBe(false);
		expect(signalVerified(process.pid, "not-a-start", "SIGTERM")).toBe(false);
	});

	it("finds a run's processes by their tag, including a child in its own process group", async () => {
		const child = spawn("sleep", ["30"], {
			detached: true,
			env: { ...process.env, [RUN_TAG]: "run-tag-test" },
			stdio: "ignore",
		});
		try {
			// The tag is visible once the child has exec'd sleep with its environment: wait for that.
			const found = await waitFor(() => {
				const procs = runProcesses("run-tag-test");
				return procs.length > 0 ? procs : undefined;
			}, "the tagged child to exec");
			expect(found.map((p) => p.pid)).toEqual([child.pid]);
			expect(runProcesses("run-tag-other")).toEqual([]);
		} finally {
			child.kill("SIGKILL");
		}
	});

	it("row lock: one holder at a time; a dead holder's lock and an empty lock file are broken", async () => {
		const row = scratch();
		const release = tryLockRow(row);
		expect(release).toBeTypeOf("function");
		expect(tryLockRow(row)).toBeUndefined();
		release?.();
		writeFileSync(join(row, "lock"), JSON.stringify({ pid: 2 ** 22 + 11, start: "5", token: "x" }));
		const again = tryLockRow(row);
		expect(again).toBeTypeOf("function");
		again?.();
		let inside = 0;
		let maxInside = 0;
		await Promise.all(
			Array.from({ length: 10 }, () =>
				withRowLock(row, async () => {
					inside += 1;
					maxInside = Math.max(maxInside, inside);
					// Hold the lock across a turn of the event loop, so the others' retries really meet it.
					await new Promise((r) => setImmediate(r));
					inside -= 1;
				}),
			),
		);
		expect(maxInside).toBe(1);
		expect(readdirSync(row)).toEqual([]);
	});

	it("queue entries are FIFO and claimed once; garbage slot files are reclaimed after their grace", () => {
		const store = scratch();
		const runs = ["a", "b", "c"].map((id) => {
			const runDir = join(store, id);
			mkdirSync(runDir);
			enqueue(store, { rowId: id, runId: `run-${id}` });
			return runDir;
		});
		const names = queuedNames(store);
		expect(names.map((n) => n.replace(/^\d+-/, ""))).toEqual(["run-a.json", "run-b.json", "run-c.json"]);
		expect(claimEntry(store, names[0]!, runs[0]!, "start")).toBe(true);
		expect(claimEntry(store, names[0]!, runs[0]!, "stop")).toBe(false);
		expect(JSON.parse(readFileSync(join(runs[0]!, "claim.json"), "utf8"))).toMatchObject({
			purpose: "start",
			olderWaiting: 0,
		});

		const slots = join(store, "slots");
		mkdirSync(slots);
		writeFileSync(join(slots, "slot-0.json"), "");
		writeFileSync(join(slots, "slot-1.json"), "{garbage");
		const me = { pid: process.pid, start: processStartTime(process.pid), runId: "x" };
		// Fresh garbage may be a claimer mid-write: left alone.
		expect(tryClaimSlot(slots, 2, me)).toBeUndefined();
		expect(liveSlots(slots, 2)).toBe(2);
	});

	it("inbox: messages are claimed once, bad or oversized ones come back rejected with a code, receipts are read back checked", () => {
		const run = scratch();
		const id = dropMessage(run, { kind: "message", text: "use sqlite\nplease", deliverAs: "followUp" });
		writeFileSync(join(run, "inbox", "zz-bad.json"), "{nope");
		writeFileSync(
			join(run, "inbox", "zz-big.json"),
			JSON.stringify({ id: "zz-big", kind: "message", text: "x".repeat(MAX_MESSAGE_BYTES + 1), at: 1 }),
		);
		writeFileSync(
			join(run, "inbox", "zz-odd.json"),
			JSON.stringify({ id: "zz-odd", kind: "message", text: 7, at: 1 }),
		);
		const claimed = claimMessages(run);
		expect(claimed).toEqual([
			expect.objectContaining({ id, kind: "message", text: "use sqlite\nplease", deliverAs: "followUp" }),
			{ id: "zz-bad", rejected: "unreadable", detail: expect.any(String) },
			{ id: "zz-big", rejected: "too-large" },
			{ id: "zz-odd", rejected: "malformed" },
		]);
		expect(claimMessages(run)).toEqual([]);
		expect(readReceiptFile(receiptPath(run, id))).toBeUndefined();
		writeReceipt(run, { id, status: "delivered", as: "followUp", at: 1, preview: "use sqlite please" });
		expect(readReceiptFile(receiptPath(run, id))).toMatchObject({ status: "delivered", as: "followUp" });
		// A receipt of the wrong shape is an error naming its path, not a silent "no answer yet".
		writeFileSync(
			receiptPath(run, "odd"),
			JSON.stringify({ id: "odd", status: "delivered", at: "soon", preview: "" }),
		);
		expect(() => readReceiptFile(receiptPath(run, "odd"))).toThrow(`${receiptPath(run, "odd")}: /at must be number`);
	});
});
