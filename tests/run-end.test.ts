/**
 * The five ways a run is ended from outside write one shape (runner/life/run-end.mjs): the state, a
 * code for programs and the reason for people, and every message still waiting answered with a coded
 * receipt, as a file and in the status. The queue (a removed target), the stop of a queued run, orphan
 * recovery here, the far side (a runner gone at a target) and the container driver (a container that
 * exited without its runner recording it) each go through it here.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { recordDeath } from "../runner/far/far-end.mjs";
import { containerDirs } from "../runner/kinds/container/container-run.mjs";
import { recordEnd } from "../runner/kinds/container/container-transport.mjs";
import { dropMessage } from "../runner/life/inbox.mjs";
import { settleUnowned } from "../runner/life/orphan.mjs";
import { enqueue, pumpQueue } from "../runner/life/queue.mjs";
import { RECEIPT_REASONS } from "../runner/life/reasons.mjs";
import { initialStatus } from "../runner/life/state-rules.mjs";
import { processStartTime } from "../runner/store/proc.mjs";
import { createBoardService } from "../src/board/engine/service.ts";
import type { RunStatus } from "../src/board/engine/types.ts";

const dirs: string[] = [];
function scratch(): string {
	const dir = mkdtempSync(join(tmpdir(), "pab-run-end-"));
	dirs.push(dir);
	return dir;
}
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

/** A run in a store's layout: its status in `state`, a runner that is gone (when it had one), a reply waiting. */
function run(store: string, rowId: string, state: RunStatus["state"], options: { runner?: boolean } = {}): string {
	const runId = `run-${rowId}`;
	const runDir = join(store, "rows", rowId, "runs", runId);
	mkdirSync(runDir, { recursive: true, mode: 0o700 });
	writeFileSync(
		join(runDir, "status.json"),
		JSON.stringify({ ...initialStatus(runId, rowId, Date.now() - 60_000), state }),
	);
	writeFileSync(join(runDir, "run.json"), "{}");
	// pid 999999 with this start time is nobody: the owner is gone.
	if (options.runner) writeFileSync(join(runDir, "runner.json"), JSON.stringify({ pid: 999_999, start: "1" }));
	dropMessage(runDir, { kind: "message", text: "are you there?", deliverAs: "steer" });
	return runDir;
}

const statusOf = (runDir: string): RunStatus =>
	JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")) as RunStatus;

/** The one shape: state, code, reason (a failed run's error), a coded receipt in the file and in the status. */
function expectEnded(
	runDir: string,
	end: { state: "failed" | "stopped"; code: string; error?: string | RegExp },
	receipt: { code: keyof typeof RECEIPT_REASONS; detail?: string },
) {
	const status = statusOf(runDir);
	expect(status).toMatchObject({ state: end.state, errorCode: end.code, endedAt: expect.any(Number) });
	if (end.error) expect(status.error).toMatch(end.error);
	else expect(status.error).toBeUndefined();
	const reason = receipt.detail
		? `${RECEIPT_REASONS[receipt.code]}: ${receipt.detail}`
		: RECEIPT_REASONS[receipt.code];
	const expected = { status: "rejected", code: receipt.code, reason, preview: "are you there?" };
	expect(status.receipts).toEqual([expect.objectContaining(expected)]);
	const id = status.receipts?.[0]?.id ?? "";
	expect(JSON.parse(readFileSync(join(runDir, "receipts", `${id}.json`), "utf8"))).toMatchObject(expected);
}

describe("ending a run from outside", () => {
	it("the queue: a run whose target was removed while it waited", () => {
		const store = scratch();
		const runDir = run(store, "q1", "queued");
		enqueue(store, { rowId: "q1", runId: "run-q1", target: "gone" });
		pumpQueue(store, { maxConcurrent: 1, node: process.execPath, env: process.env });
		expectEnded(
			runDir,
			{
				state: "failed",
				code: "start-failed",
				error: "target gone does not exist any more (it was removed while this run waited)",
			},
			{ code: "not-started", detail: "it failed before it started" },
		);
	});

	it("stop of a queued run, and of a run whose runner is gone", async () => {
		const store = scratch();
		// The only local slot is held by a live claimer: what is dispatched waits in the queue.
		mkdirSync(join(store, "slots"), { recursive: true, mode: 0o700 });
		writeFileSync(
			join(store, "slots", "slot-0.json"),
			JSON.stringify({ pid: process.pid, start: processStartTime(process.pid), runId: "busy" }),
		);
		const board = createBoardService({ storeDir: store, maxConcurrent: 1, piCommand: ["false"] });
		const row = await board.dispatch({ prompt: "wait in the queue", cwd: scratch() });
		expect((await board.reply(row.id, "are you there?")).delivery).toBe("queued");
		expect((await board.stop(row.id)).state).toBe("stopped");
		expectEnded(
			join(store, "rows", row.id, "runs", row.currentRunId ?? ""),
			{ state: "stopped", code: "stopped" },
			{ code: "not-started", detail: "it was stopped while queued" },
		);

		const orphan = run(store, "o1", "working", { runner: true });
		writeFileSync(
			join(store, "rows", "o1", "meta.json"),
			JSON.stringify({
				...JSON.parse(readFileSync(join(store, "rows", row.id, "meta.json"), "utf8")),
				id: "o1",
				currentRunId: "run-o1",
				sessionFile: join(store, "sessions", "o1.jsonl"),
			}),
		);
		expect((await board.stop("o1")).state).toBe("stopped");
		expectEnded(orphan, { state: "stopped", code: "stopped" }, { code: "run-ended" });
	});

	it("orphan recovery here: a dead runner, and one that never recorded itself", async () => {
		const store = scratch();
		const died = run(store, "d1", "working", { runner: true });
		const spawnWith = { node: process.execPath, env: process.env };
		expect(await settleUnowned(store, died, { spawnWith })).toBe("ended");
		expectEnded(died, { state: "failed", code: "runner-died", error: "runner died" }, { code: "run-ended" });
		const never = run(store, "n1", "queued");
		expect(await settleUnowned(store, never, { spawnWith })).toBe("ended");
		expectEnded(
			never,
			{ state: "failed", code: "never-started", error: "runner never started" },
			{ code: "run-ended" },
		);
	});

	it("the far side: a runner gone at the target (a host reboot)", async () => {
		const far = join(scratch(), "store");
		const runDir = run(far, "f1", "working", { runner: true });
		await recordDeath(runDir);
		expectEnded(runDir, { state: "failed", code: "runner-died", error: "runner died" }, { code: "run-ended" });
	});

	it("the container driver: a container that exited without its runner recording an end", async () => {
		const store = scratch();
		const target = {
			kind: "container",
			name: "box",
			engine: "podman" as const,
			image: "w",
			max: 1,
			env: [],
			memory: "256m",
		};
		const link = { target, storeDir: store, rowId: "c1", runId: "run-c1" } as unknown as Parameters<
			typeof recordEnd
		>[0];
		const runDir = containerDirs(link).run;
		run(join(store, "targets", "box", "store"), "c1", "working", { runner: true });
		// The engine says the container is gone (a podman on PATH that knows no container).
		const bin = scratch();
		writeFileSync(join(bin, "podman"), "#!/bin/sh\necho 'Error: no such container ab-run-c1' >&2\nexit 125\n");
		chmodSync(join(bin, "podman"), 0o755);
		const path = process.env.PATH;
		process.env.PATH = `${bin}:${path}`;
		try {
			await recordEnd(link, { code: 137 });
		} finally {
			process.env.PATH = path;
		}
		expectEnded(
			runDir,
			{
				state: "failed",
				code: "killed-outside",
				error: "its container was killed (exit 137: killed from outside, or out of memory with --memory 256m)",
			},
			{ code: "run-ended" },
		);
	});
});
