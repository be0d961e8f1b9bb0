/**
 * Bounded stress: 3 processes x 20 dispatches, limit 5, runners killed at random. Observed from /proc
 * (every few ms): never more than 5 workers; queued runs hold no process; FIFO starts; every row
 * not killed completes; killed rows end with a reason; no slot and no process of any run is left.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { BoardRow } from "../src/board/types.ts";
import { boardFor } from "../test-support/board-helpers.ts";
import { createTestAgent, REPO_ROOT, waitFor, type TestAgent } from "../test-support/pi-harness.ts";
import { runTaggedProcs, storeRunners, storeWorkers } from "../test-support/proc-scan.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

function dispatchFrom(agent: TestAgent, storeDir: string, count: number, max: number, tag: string): Promise<string[]> {
	return new Promise((resolve, reject) => {
		const script = join(REPO_ROOT, "test-support/board-dispatch-child.ts");
		const child = spawn(process.execPath, ["--experimental-strip-types", "--no-warnings", script, storeDir, String(count), String(max), agent.cwd, tag], {
			env: agent.env,
			stdio: ["ignore", "pipe", "pipe"],
		});
		let out = "";
		let err = "";
		child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
		child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
		child.on("close", (code) => (code === 0 ? resolve(JSON.parse(out) as string[]) : reject(new Error(`dispatcher exited ${code}: ${err}`))));
	});
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("board under stress", () => {
	it("3 dispatchers x 20 runs, limit 5, runners killed at random: the limit, FIFO and cleanup hold", async () => {
		const agent = createTestAgent({ script: { rules: [], fallback: [{ toolCall: { name: "ls", args: {} } }, { delayMs: 200, then: { text: "Slice finished." } }] } });
		agents.push(agent);
		const LIMIT = 5;
		const board = boardFor(agent, { maxConcurrent: LIMIT });
		const storeDir = board.storeDir;

		let observing = true;
		let maxWorkers = 0;
		let maxRunners = 0;
		let maxQueued = 0;
		let samples = 0;
		const over: string[][] = [];
		const observer = (async () => {
			while (observing) {
				const workers = storeWorkers(storeDir);
				maxWorkers = Math.max(maxWorkers, workers.length);
				// Over the limit: keep who they were, so a failure says which runs overlapped.
				if (workers.length > LIMIT && over.length < 3) over.push(workers.map((w) => `${w.pid} ${w.argv.find((a) => a.includes("/sessions/")) ?? "?"}`));
				maxRunners = Math.max(maxRunners, storeRunners(storeDir).length);
				try {
					maxQueued = Math.max(maxQueued, readdirSync(join(storeDir, "queue")).filter((n) => n.endsWith(".json") && !n.startsWith(".")).length);
				} catch {
					// Not created yet.
				}
				samples += 1;
				await sleep(2);
			}
		})();

		const killed = new Set<string>();
		let killing = true;
		const killer = (async () => {
			await sleep(1500);
			while (killing && killed.size < 8) {
				const runners = storeRunners(storeDir);
				const victim = runners[Math.floor(Math.random() * runners.length)];
				if (victim) {
					const config = victim.argv.find((a) => a.endsWith("run.json"));
					try {
						process.kill(victim.pid, "SIGKILL");
						if (config) killed.add(dirname(config));
					} catch {
						// Exited on its own meanwhile.
					}
				}
				await sleep(300 + Math.floor(Math.random() * 300));
			}
		})();

		const ids = (await Promise.all(["alpha", "beta", "gamma"].map((tag) => dispatchFrom(agent, storeDir, 20, LIMIT, tag)))).flat();
		expect(new Set(ids).size).toBe(60);

		// Readers keep the queue moving and record dead runners, as an open board would.
		const rows = await waitFor(
			async () => {
				const listed = await board.list();
				const done = listed.filter((row) => ids.includes(row.id) && !row.alive && row.state !== "queued");
				return done.length === 60 ? listed : undefined;
			},
			"all 60 runs to end",
			170_000,
			200,
		);
		killing = false;
		await killer;
		await waitFor(() => storeWorkers(storeDir).length === 0 && storeRunners(storeDir).length === 0, "every worker and runner to exit", 20_000);
		observing = false;
		await observer;

		const byRunDir = new Map(rows.map((row) => [row.runDir!, row] as const));
		const notKilled = rows.filter((row) => !killed.has(row.runDir!));
		expect(notKilled.filter((row) => row.state !== "completed").map((row) => `${row.name}: ${row.state} ${row.error ?? ""}`)).toEqual([]);
		for (const runDir of killed) {
			const row = byRunDir.get(runDir);
			if (!row) continue;
			// A runner killed after it recorded completion leaves a completed row; otherwise a reason.
			if (row.state !== "completed") expect({ state: row.state, error: row.error }).toMatchObject({ state: "failed", error: expect.stringMatching(/runner/) });
		}
		expect(killed.size).toBeGreaterThan(0);

		expect(samples).toBeGreaterThan(100);
		expect(maxWorkers).toBeGreaterThan(0);
		expect(maxWorkers, JSON.stringify(over)).toBeLessThanOrEqual(LIMIT);
		// Queued runs are files: at most the limit's runners (plus ones finishing) while dozens wait.
		expect(maxQueued).toBeGreaterThanOrEqual(30);
		expect(maxRunners).toBeLessThanOrEqual(LIMIT + 3);

		// FIFO: when a run was claimed, no older run was still waiting in the queue.
		const claims = rows.map((row) => JSON.parse(readFileSync(join(row.runDir!, "claim.json"), "utf8")) as { olderWaiting?: number; purpose: string });
		expect(claims.every((claim) => claim.purpose === "start")).toBe(true);
		expect(claims.filter((claim) => claim.olderWaiting !== 0)).toEqual([]);

		// Nothing left: no slot file, no process carrying any of these runs' tags.
		expect(readdirSync(join(storeDir, "slots")).filter((n) => n.startsWith("slot-"))).toEqual([]);
		expect(runTaggedProcs(rows.map((row: BoardRow) => row.currentRunId!))).toEqual([]);
		expect(existsSync(join(storeDir, "queue")) && readdirSync(join(storeDir, "queue")).filter((n) => !n.startsWith("."))).toEqual([]);
	}, 240_000);
});
