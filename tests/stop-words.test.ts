/**
 * `stop` says what happened, from what the engine's stop did (run-control.ts stopOutcome), never from
 * the row's state read afterwards: "stopped" (it ended by this stop), "already ended (<state>)" (nothing
 * was done), "stop requested (the row is on box1, unreachable since ...)" (the stop waits in the run's
 * inbox for its link to reach the target).
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { initialStatus } from "../runner/life/state-rules.mjs";
import { processStartTime } from "../runner/store/proc.mjs";
import { createBoardService } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { parseSubcommand, runSubcommand } from "../src/board/subcommands/subcommands.ts";
import { clockTime } from "../src/board/view-model/row-text.ts";
import { stopText } from "../src/board/view-model/stop-text.ts";

const dirs: string[] = [];
function scratch(): string {
	const dir = mkdtempSync(join(tmpdir(), "pab-stop-words-"));
	dirs.push(dir);
	return dir;
}
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

const row = (fields: Partial<BoardRow>): BoardRow => ({ id: "r1", state: "working", ...fields }) as BoardRow;

describe("stop's words", () => {
	it("come from the outcome: stopped, already ended with the state it ended in, requested with where and why", () => {
		expect(stopText({ row: row({ state: "stopped" }), outcome: "stopped" })).toBe("stopped");
		expect(stopText({ row: row({ state: "failed" }), outcome: "ended" })).toBe("already ended (failed)");
		const since = Date.UTC(2026, 0, 1, 14, 3);
		expect(
			stopText({
				row: row({ target: "box1", unreachable: { since, reason: "ssh: Connection refused\u001b[2J" } }),
				outcome: "requested",
			}),
		).toBe(`stop requested (the row is on box1, unreachable since ${clockTime(since)}: ssh: Connection refused)`);
		expect(stopText({ row: row({ target: "box1" }), outcome: "requested" })).toBe(
			"stop requested (the row is on box1, its link delivers the stop when it can)",
		);
	});

	it("the subcommand: a queued row stopped, then already ended; a target row out of reach, requested", async () => {
		const store = scratch();
		// The only local slot is held by a live claimer: what is dispatched waits in the queue.
		mkdirSync(join(store, "slots"), { recursive: true, mode: 0o700 });
		writeFileSync(
			join(store, "slots", "slot-0.json"),
			JSON.stringify({ pid: process.pid, start: processStartTime(process.pid), runId: "busy" }),
		);
		const board = createBoardService({ storeDir: store, maxConcurrent: 1, piCommand: ["false"] });
		const cwd = scratch();
		const stop = async (id: string) => {
			const parsed = parseSubcommand(`stop ${id}`);
			if (!parsed.ok) throw new Error(parsed.error);
			return runSubcommand(board, parsed, cwd);
		};
		const queued = await board.dispatch({ prompt: "wait in the queue", cwd });
		expect(queued.state).toBe("queued");
		expect(await stop(queued.id)).toBe(`${queued.id}: stopped`);
		expect(await stop(queued.id)).toBe(`${queued.id}: already ended (stopped)`);

		// A target run whose link (this process stands for it) cannot reach box1: the stop waits in its inbox.
		const id = "t1";
		const runId = "run-t1";
		const runDir = join(store, "rows", id, "runs", runId);
		mkdirSync(runDir, { recursive: true, mode: 0o700 });
		const since = Date.now() - 60_000;
		writeFileSync(
			join(runDir, "status.json"),
			JSON.stringify({
				...initialStatus(runId, id, Date.now() - 120_000),
				state: "working",
				startedAt: since,
				link: { target: "box1", unreachableSince: since, reason: "ssh: Connection refused" },
			}),
		);
		writeFileSync(join(runDir, "run.json"), "{}");
		writeFileSync(
			join(runDir, "runner.json"),
			JSON.stringify({ pid: process.pid, start: processStartTime(process.pid) }),
		);
		writeFileSync(
			join(store, "rows", id, "meta.json"),
			JSON.stringify({
				...JSON.parse(readFileSync(join(store, "rows", queued.id, "meta.json"), "utf8")),
				id,
				currentRunId: runId,
				target: "box1",
				sessionFile: join(store, "sessions", `${id}.jsonl`),
			}),
		);
		expect(await stop(id)).toBe(
			`${id}: stop requested (the row is on box1, unreachable since ${clockTime(since)}: ssh: Connection refused)`,
		);
		expect(readdirSync(join(runDir, "inbox")).length).toBe(1);
	}, 30_000);
});
