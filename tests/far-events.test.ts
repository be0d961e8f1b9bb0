/**
 * A far events.jsonl read in pieces (runner/far/far-events.mjs): lines the link has are passed over, a
 * line over the limit is skipped whole however it arrives, lines out of order or not events are counted,
 * a torn tail waits for its end, and a file cut back (a runner's torn append on a full disk) is read again
 * from the line that was torn.
 */
import { appendFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventReader } from "../runner/far/far-events.mjs";
import { MAX_EVENT_LINE_BYTES } from "../runner/far/frames.mjs";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

function reader(fromSeq = 0) {
	const dir = mkdtempSync(join(tmpdir(), "pab-far-events-"));
	dirs.push(dir);
	const path = join(dir, "events.jsonl");
	writeFileSync(path, "");
	const sent: number[] = [];
	const flags: { reason: string; count: number }[] = [];
	const events = eventReader({
		runDir: dir,
		path,
		fromSeq,
		send: (seq) => sent.push(seq),
		flag: (reason, count) => flags.push({ reason, count }),
	});
	return { path, sent, flags, events };
}

const line = (seq: number, extra = "") => `${JSON.stringify({ seq, at: 1, type: "turn_end", extra })}\n`;

describe("a far events.jsonl read in pieces", () => {
	it("passes over what the link has, skips a line over the limit and counts what the runner cannot have written", () => {
		const { path, sent, flags, events } = reader(2);
		appendFileSync(path, line(1) + line(2) + line(3));
		appendFileSync(path, `${"x".repeat(MAX_EVENT_LINE_BYTES + 10)}\n`);
		appendFileSync(path, `${line(4)}not json\n${line(2)}${line(5)}`);
		// Read in small budgets: a long line spans many reads and is still skipped whole.
		while (events.read(64 * 1024));
		expect(sent).toEqual([3, 4, 5]);
		expect(events.lastSeq).toBe(5);
		expect(flags.at(-1)).toEqual({
			reason: `${path} on the target: skipped 1 line(s) over 1 MiB, 1 line(s) out of order, 1 line(s) that are not events`,
			count: 3,
		});
	});

	it("waits for a torn tail, and reads again from a line that was cut back", () => {
		const { path, sent, events } = reader();
		appendFileSync(path, line(1) + line(2).slice(0, 10));
		events.read(Infinity);
		expect(sent).toEqual([1]);
		// The runner's append failed half way and was cut back to its last whole line, then written again.
		truncateSync(path, line(1).length);
		appendFileSync(path, line(2, "again") + line(3));
		events.read(Infinity);
		expect(sent).toEqual([1, 2, 3]);
	});
});
