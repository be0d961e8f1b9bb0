/**
 * A runner slow to start on a busy machine is not a dead one (#40: at a hundred agents a host's far runner
 * took more than the 15 s start grace to record itself, and its run was failed "runner never started" with
 * its runner killed). Past the grace, a process carrying the run's tag still counts as its start: here, the
 * real runner and pi with the scripted model, the runner started through a node that waits 17 s first
 * (AGENT_BOARD_NODE); and at a target's far side, the rule itself on real processes carrying the far tag.
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { farRunStarting } from "../runner/far/far-end.mjs";
import { RUN_TAG } from "../runner/store/proc.mjs";
import { RUNNER_START_GRACE_MS } from "../runner/life/run-owner.mjs";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, waitFor, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

/** A node for the board that waits `seconds` before it runs a job runner (the keeper starts at once). */
function slowRunnerNode(dir: string, seconds: number): string {
	const path = join(dir, "slow-node");
	writeFileSync(
		path,
		[
			"#!/bin/sh",
			`case "$*" in *job-runner.mjs*) sleep ${seconds} ;; esac`,
			`exec '${process.execPath}' "$@"`,
			"",
		].join("\n"),
	);
	chmodSync(path, 0o755);
	return path;
}

describe("a runner slow to start", () => {
	it("keeps its run past the start grace while a process of the run is there, and the run completes", async () => {
		const waitS = RUNNER_START_GRACE_MS / 1000 + 2;
		const agent = createTestAgent();
		agents.push(agent);
		agent.env.AGENT_BOARD_NODE = slowRunnerNode(agent.root, waitS);
		const board = boardFor(agent);
		const row = await board.dispatch({ prompt: "SLOW start", cwd: agent.cwd });
		// Past the grace, before the runner recorded itself: the run is still starting, not failed.
		await new Promise((resolve) => setTimeout(resolve, RUNNER_START_GRACE_MS + 500));
		const waiting = await board.get(row.id);
		expect(waiting?.state, waiting?.error).toBe("queued");
		expect(waiting?.alive).toBe(true);
		const done = await waitDone(board, row.id, 120_000);
		expect(done.state, done.error).toBe("completed");
	});

	it("at a target's far side: a process carrying the far tag is the runner starting; none, and it is gone", async () => {
		const agent = createTestAgent();
		agents.push(agent);
		const runId = "run-slowfar01";
		const runDir = join(agent.root, "far", "rows", "row-1", "runs", runId);
		mkdirSync(runDir, { recursive: true });
		expect(farRunStarting(runDir)).toBe(false);
		const starting = spawn("sleep", ["60"], { env: { ...process.env, [RUN_TAG]: `${runId}@far` }, stdio: "ignore" });
		try {
			await waitFor(() => farRunStarting(runDir) || undefined, "the far tag's process to be seen");
			// A process of this machine's side of the run (the link's tag) is not the far runner.
			const link = spawn("sleep", ["60"], { env: { ...process.env, [RUN_TAG]: runId }, stdio: "ignore" });
			starting.kill("SIGKILL");
			await waitFor(() => !farRunStarting(runDir) || undefined, "the far tag's process to be gone");
			link.kill("SIGKILL");
		} finally {
			starting.kill("SIGKILL");
		}
	});
});
