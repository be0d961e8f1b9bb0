/** Retention: `gc` trims old runs of archived rows only, `autoGc` runs at most once a day, `/agent-board gc` parses. */
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { autoGc, formatGcReport, gc } from "../src/board/engine/gc.ts";
import { parseSubcommand } from "../src/board/subcommands/subcommands.ts";
import { tempStores, writeRow } from "../test-support/hardening-fixtures.ts";

const store = tempStores();

describe("retention", () => {
	const DAY = 24 * 60 * 60 * 1000;

	function archivedRowWithRuns(paths: ReturnType<typeof store>["paths"], id: string, archived: boolean, now: number) {
		// Three finished runs, 30, 20 and 10 days old; the newest is the current one.
		const runs = [30, 20, 10].map((days, n) => ({ runId: `run-${id}-${n}`, at: now - days * DAY }));
		for (const run of runs) writeRow(paths, id, { runId: run.runId, at: run.at, metaPatch: { archived } });
		for (const run of runs) {
			const dir = paths.run(id, run.runId);
			writeFileSync(join(dir, "events.jsonl"), "x".repeat(1000));
			writeFileSync(join(dir, "stderr.log"), "e".repeat(100));
			writeFileSync(join(dir, "runner.log"), "r".repeat(10));
			writeFileSync(join(dir, "run.json"), "{}");
		}
		return runs.map((run) => paths.run(id, run.runId));
	}

	it("trims old runs of archived rows only, keeps the newest runs, status, run.json and sessions, and reports bytes", () => {
		const { root, store: dir, paths } = store();
		const now = Date.now();
		const archived = archivedRowWithRuns(paths, "old-archived", true, now);
		const active = archivedRowWithRuns(paths, "old-active", false, now);
		mkdirSync(paths.sessions, { recursive: true });
		writeFileSync(paths.session("old-archived"), "session");
		// A run whose runner is alive (this process) is never trimmed, whatever its status says.
		const live = archivedRowWithRuns(paths, "live-archived", true, now);
		writeFileSync(
			join(live[0]!, "runner.json"),
			JSON.stringify({
				pid: process.pid,
				start: readFileSync(`/proc/${process.pid}/stat`, "utf8")
					.slice(readFileSync(`/proc/${process.pid}/stat`, "utf8").lastIndexOf(")") + 2)
					.split(" ")[19],
			}),
		);
		// A symlinked log is not followed or counted.
		const precious = join(root, "precious.log");
		writeFileSync(precious, "keep me");
		rmSync(join(archived[0]!, "stderr.log"));
		symlinkSync(precious, join(archived[0]!, "stderr.log"));

		const dry = gc(dir, { dryRun: true, now });
		expect(dry.files.map((file) => file.path).sort()).toEqual(
			[
				join(archived[0]!, "events.jsonl"),
				join(archived[0]!, "runner.log"),
				join(archived[1]!, "events.jsonl"),
				join(archived[1]!, "stderr.log"),
				join(archived[1]!, "runner.log"),
				join(live[1]!, "events.jsonl"),
				join(live[1]!, "stderr.log"),
				join(live[1]!, "runner.log"),
			].sort(),
		);
		expect(dry.bytes).toBe(1000 + 10 + 2 * 1110);
		expect(existsSync(join(archived[0]!, "events.jsonl"))).toBe(true);
		expect(formatGcReport(dry)).toMatch(/^gc: would free 3\.2 KB in 8 files from 3 runs of 2 archived rows/);

		const done = gc(dir, { now });
		expect(done.bytes).toBe(dry.bytes);
		for (const file of dry.files) expect(existsSync(file.path), file.path).toBe(false);
		for (const kept of [
			join(archived[0]!, "status.json"),
			join(archived[0]!, "run.json"),
			join(archived[2]!, "events.jsonl"),
			paths.session("old-archived"),
			join(live[0]!, "events.jsonl"),
		])
			expect(existsSync(kept), kept).toBe(true);
		for (const run of active) expect(existsSync(join(run, "events.jsonl")), run).toBe(true);
		expect(readFileSync(precious, "utf8")).toBe("keep me");
		expect(gc(dir, { now }).files).toEqual([]);
		// keepRuns and maxAgeDays: nothing is old enough at 40 days; keeping 3 keeps everything.
		const again = store();
		archivedRowWithRuns(again.paths, "r", true, now);
		expect(gc(again.store, { dryRun: true, now, maxAgeDays: 40 }).files).toEqual([]);
		expect(gc(again.store, { dryRun: true, now, keepRuns: 3 }).files).toEqual([]);
		expect(
			gc(again.store, { dryRun: true, now, env: { AGENT_BOARD_GC_KEEP: "2", AGENT_BOARD_GC_DAYS: "5" } }).runs,
		).toBe(1);
	});

	it("runs automatically at most once a day and parses the gc subcommand", () => {
		const { store: dir, paths } = store();
		const now = Date.now();
		archivedRowWithRuns(paths, "a", true, now);
		const first = autoGc(dir, { now, env: {} });
		expect(first?.runs).toBe(2);
		expect(autoGc(dir, { now: now + 1000, env: {} })).toBeUndefined();
		expect(autoGc(dir, { now: now + 2 * DAY, env: {} })?.runs).toBe(0);
		utimesSync(join(dir, "gc-last"), 0, 0);
		expect(autoGc(dir, { now, env: { AGENT_BOARD_GC: "off" } })).toBeUndefined();
		expect(parseSubcommand("gc")).toEqual({ ok: true, name: "gc", dryRun: false });
		expect(parseSubcommand("gc --dry-run")).toEqual({ ok: true, name: "gc", dryRun: true });
		expect(parseSubcommand("gc now")).toMatchObject({ ok: false });
	});
});
