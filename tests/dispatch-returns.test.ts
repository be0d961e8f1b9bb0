/**
 * A process that dispatches and ends at once still starts its run (docs/engine.md, "A dispatch that returns
 * at once"). With no keeper and no other reader of the store, only the dispatching process's own pump can
 * start it.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createTestAgent, REPO_ROOT, type TestAgent } from "../test-support/pi-harness.ts";
import { waitFor } from "../test-support/wait.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

/** The state in the run's status.json, read as a file (a service's read would pump the queue itself). */
function runState(storeDir: string, rowId: string): string {
	const runs = join(storeDir, "rows", rowId, "runs");
	const [runId] = readdirSync(runs);
	return (JSON.parse(readFileSync(join(runs, runId ?? "", "status.json"), "utf8")) as { state: string }).state;
}

describe("a dispatch that returns at once", { timeout: 120_000 }, () => {
	it("a process that dispatches and exits still starts its run", async () => {
		const agent = createTestAgent({ script: { rules: [], fallback: [{ text: "Started and done." }] } });
		agents.push(agent);
		const storeDir = join(agent.root, "store");
		const out = execFileSync(
			process.execPath,
			[
				"--experimental-strip-types",
				"--no-warnings",
				join(REPO_ROOT, "test-support/board-dispatch-child.ts"),
				storeDir,
				"1",
				"2",
				agent.cwd,
				"exits",
			],
			{ env: { ...agent.env, AGENT_BOARD_KEEPER: "off" }, encoding: "utf8", timeout: 60_000 },
		);
		const [id] = JSON.parse(out) as string[];
		expect(id).toBeTruthy();
		const state = await waitFor(
			() => {
				const now = runState(storeDir, id ?? "");
				return now === "completed" ? now : "";
			},
			"the run to complete",
			90_000,
		);
		expect(state).toBe("completed");
	});
});
