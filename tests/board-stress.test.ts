/**
 * Bounded stress: 3 processes x 20 dispatches, limit 5, runners killed at random. The limit is
 * proven twice: from the runs' own records (each claim names its slot; a slot passes on only after
 * its run's worker is over) and observed from /proc at every change of the store. Queued runs hold
 * no process; FIFO starts; every row not killed completes; killed rows end with a reason; no slot
 * and no process of any run is left.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, watch } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { BoardRow } from "../src/board/engine/types.ts";
import { boardFor, readEvents } from "../test-support/board-helpers.ts";
import { createTestAgent, REPO_ROOT, waitFor, type TestAgent } from "../test-support/pi-harness.ts";
import { runTaggedProcs, storeRunners, storeWorkers, type ProcInfo } from "../test-support/proc-scan.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

function dispatchFrom(agent: TestAgent, storeDir: string, count: number, max: number, tag: string): Promise<string[]> {
	return new Promise((resolve, reject) => {
		const script = join(REPO_ROOT, "test-support/board-dispatch-child.ts");
		const child = spawn(
			process.execPath,
			["--experimental-strip-types", "--no-warnings", script, storeDir, String(count), String(max), agent.cwd, tag],
			{
				env: agent.env,
				stdio: ["ignore", "pipe", "pipe"],
			},
		);
		let out = "";
		let err = "";
		child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
		child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
		child.on("close", (code) =>
			code === 0 ? resolve(JSON.parse(out) as string[]) : reject(new Error(`dispatcher exited ${code}: ${err}`)),
		);
	});
}

/**
 * Resolves at the next change in the store's notify/ or slots/ (every status write and slot change
 * touches one), or when `stop` does. It resolves on the next turn of the event loop, not inside the watch
 * callback: libuv reads inotify until it runs dry, so work done in the callback while 60 runs keep
 * writing starved every timer of this process (the killer never ran, 42 s at a time, on a loaded machine).
 */
function storeChanged(storeDir: string, stop: Promise<void>): Promise<void> {
	return new Promise((resolve) => {
		const watchers = ["notify", "slots"].flatMap((dir) => {
			try {
				return [watch(join(storeDir, dir), () => done())];
			} catch {
				return []; // The store is gone: the test is over (it failed) and its cleanup ran.
			}
		});
		const done = () => {
			for (const watcher of watchers) watcher.close();
			setImmediate(resolve);
		};
		void stop.then(done);
	});
}

interface RunRecord {
	runDir: string;
	slot?: string;
	claimedAt: number;
	endedAt?: number;
	lastEventAt?: number;
	killed: boolean;
}

/** Each run from its own files: the slot it claimed and when, when its runner recorded the end, its last event. */
function runRecord(runDir: string, killed: boolean): RunRecord {
	const claim = JSON.parse(readFileSync(join(runDir, "claim.json"), "utf8")) as { slot?: string; at: number };
	const status = JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")) as { endedAt?: number };
	const events = existsSync(join(runDir, "events.jsonl")) ? readEvents(runDir) : [];
	return {
		runDir,
		slot: claim.slot,
		claimedAt: claim.at,
		endedAt: status.endedAt,
		lastEventAt: events.at(-1)?.at as number | undefined,
		killed,
	};
}

/** When the run's runner recorded its end; undefined while it has not (or has not written a status yet). */
function runEndedAt(runDir: string): number | undefined {
	try {
		return (JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")) as { endedAt?: number }).endedAt;
	} catch {
		return undefined;
	}
}

/** What holds the queue: each slot's owner (alive?, processes of its run), the entries, the stuck runs' claims. */
function queueState(storeDir: string, pending: BoardRow[]): string {
	const read = (path: string) => {
		try {
			return readFileSync(path, "utf8");
		} catch (error) {
			return String(error);
		}
	};
	const list = (dir: string) => {
		try {
			return readdirSync(dir);
		} catch {
			return [];
		}
	};
	const slots = list(join(storeDir, "slots")).map((name) => {
		const text = read(join(storeDir, "slots", name));
		let owner: { pid?: number; runId?: string } = {};
		try {
			owner = JSON.parse(text) as typeof owner;
		} catch {
			// Shown as text.
		}
		const alive = owner.pid !== undefined && existsSync(`/proc/${owner.pid}`);
		return `${name} ${text} pidAlive=${alive} runProcs=${owner.runId ? runTaggedProcs([owner.runId]).length : "?"}`;
	});
	const claims = pending.map(
		(row) =>
			`${row.id} claim.json=${read(join(row.runDir ?? "", "claim.json"))} runner.json=${existsSync(join(row.runDir ?? "", "runner.json"))}`,
	);
	return `slots: ${slots.join(" | ")}\nqueue: ${list(join(storeDir, "queue")).join(", ")}\nclaims: ${claims.join(" | ")}`;
}

describe("board under stress", () => {
	it("3 dispatchers x 20 runs, limit 5, runners killed at random: the limit, FIFO and cleanup hold", async () => {
		const agent = createTestAgent({
			script: {
				rules: [],
				fallback: [{ toolCall: { name: "ls", args: {} } }, { delayMs: 200, then: { text: "Slice finished." } }],
			},
		});
		agents.push(agent);
		const LIMIT = 5;
		const board = boardFor(agent, { maxConcurrent: LIMIT });
		const storeDir = board.storeDir;

		for (const dir of ["notify", "slots"]) mkdirSync(join(storeDir, dir), { recursive: true, mode: 0o700 });
		let observing = true;
		let stopObserving = (): void => undefined;
		const stopped = new Promise<void>((resolve) => (stopObserving = resolve));
		let maxWorkers = 0;
		// Runners whose run is not over yet (no end recorded): each holds a slot. A runner that recorded its
		// end and freed its slot still pumps the queue and may summarise before it exits; those are not counted.
		let maxLiveRunners = 0;
		let maxRunners = 0;
		const unclaimed = new Set<string>();
		const twice = new Set<string>();
		let maxQueued = 0;
		let samples = 0;
		const over: string[][] = [];
		const runDirOf = (runner: ProcInfo) => dirname(runner.argv.find((a) => a.endsWith("run.json")) ?? "/");
		// Workers start and end only with a store change (their runner writes status, slots change): look then.
		const observer = (async () => {
			while (observing) {
				const workers = storeWorkers(storeDir);
				maxWorkers = Math.max(maxWorkers, workers.length);
				// Over the limit: keep who they were, so a failure says which runs overlapped.
				if (workers.length > LIMIT && over.length < 3)
					over.push(workers.map((w) => `${w.pid} ${w.argv.find((a) => a.includes("/sessions/")) ?? "?"}`));
				const runners = storeRunners(storeDir);
				maxRunners = Math.max(maxRunners, runners.length);
				// Read after the scan: a run not over now was not over then, so these were all alive at once.
				const notOver = runners.filter((runner) => runEndedAt(runDirOf(runner)) === undefined);
				maxLiveRunners = Math.max(maxLiveRunners, notOver.length);
				// A queued run holds no process: every runner's run has claimed its slot.
				for (const runner of runners)
					if (!existsSync(join(runDirOf(runner), "claim.json"))) unclaimed.add(runDirOf(runner));
				// One runner per run, ever at once.
				const dirs = runners.map(runDirOf);
				for (const dir of dirs.filter((dir, n) => dirs.indexOf(dir) !== n)) twice.add(dir);
				try {
					maxQueued = Math.max(
						maxQueued,
						readdirSync(join(storeDir, "queue")).filter((n) => n.endsWith(".json") && !n.startsWith(".")).length,
					);
				} catch {
					// Not created yet.
				}
				samples += 1;
				await storeChanged(storeDir, stopped);
			}
		})();

		const killed = new Set<string>();
		let killing = true;
		// A runner whose run has a worker (so a kill really cuts a run short), not one killed already.
		const killable = () =>
			storeRunners(storeDir).find(
				(runner) => !killed.has(runDirOf(runner)) && existsSync(join(runDirOf(runner), "worker.json")),
			);
		const killer = (async () => {
			while (killing && killed.size < 8) {
				const victim = await waitFor(() => !killing || killable(), "a runner with a worker to kill", 170_000, 20);
				if (victim === true) break;
				try {
					process.kill(victim.pid, "SIGKILL");
					killed.add(runDirOf(victim));
				} catch {
					// Exited on its own meanwhile.
				}
				// The next kill once another run has started: the queue must keep moving between kills.
				const seen = new Set(storeRunners(storeDir).map((runner) => runner.pid));
				await waitFor(
					() => !killing || storeRunners(storeDir).some((runner) => !seen.has(runner.pid)),
					"another runner to start",
					170_000,
					20,
				);
			}
		})();

		const ids = (
			await Promise.all(["alpha", "beta", "gamma"].map((tag) => dispatchFrom(agent, storeDir, 20, LIMIT, tag)))
		).flat();
		expect(new Set(ids).size).toBe(60);

		// The supervise step records dead runners' ends and keeps the queue moving, as an open board's tick
		// does (reads only read: a run queued behind a killed runner whose worker still held the slot when
		// the others pumped waits for it). The guard is a stall (no run ended for a minute), not a deadline.
		const rows = await (async () => {
			let [left, since] = [Number.POSITIVE_INFINITY, Date.now()];
			for (;;) {
				await board.supervise?.({ all: true });
				const listed = await board.list();
				const pending = listed.filter((row) => ids.includes(row.id) && (row.alive || row.state === "queued"));
				if (pending.length === 0 && listed.filter((row) => ids.includes(row.id)).length === 60) return listed;
				if (pending.length < left) [left, since] = [pending.length, Date.now()];
				const stuck = pending.map(
					(row) => `${row.name} ${row.state}${row.alive ? "" : " (no owner)"} ${row.error ?? row.summary ?? ""}`,
				);
				if (Date.now() - since > 60_000)
					throw new Error(
						`no run ended for 60 s; ${pending.length} not over: ${stuck.join("; ")}\n${queueState(storeDir, pending)}`,
					);
				await new Promise((r) => setTimeout(r, 200));
			}
		})();
		killing = false;
		await killer;
		await waitFor(
			() => storeWorkers(storeDir).length === 0 && storeRunners(storeDir).length === 0,
			"every worker and runner to exit",
			20_000,
		);
		// One more reader, as an open board would be: a runner killed after it recorded its end but before it
		// freed its slot leaves a slot file whose run is over; a pump with nothing queued removes it.
		await board.pump();
		observing = false;
		stopObserving();
		await observer;

		const byRunDir = new Map(rows.map((row) => [row.runDir!, row] as const));
		const notKilled = rows.filter((row) => !killed.has(row.runDir!));
		expect(
			notKilled
				.filter((row) => row.state !== "completed")
				.map((row) => `${row.name}: ${row.state} ${row.error ?? ""}`),
		).toEqual([]);
		for (const runDir of killed) {
			const row = byRunDir.get(runDir);
			if (!row) continue;
			// A runner killed after it recorded completion leaves a completed row; otherwise a reason.
			if (row.state !== "completed")
				expect({ state: row.state, error: row.error }).toMatchObject({
					state: "failed",
					error: expect.stringMatching(/runner/),
				});
		}
		expect(killed.size).toBeGreaterThan(0);

		// The limit from the runs' own records. Every start names its slot; slots are slot-0 .. slot-(LIMIT-1).
		// On each slot, a run's worker is over before the next run claims it: its runner records the end
		// before it frees the slot, and a killed runner's last event comes before the slot can be taken.
		const records = rows.map((row) => runRecord(row.runDir!, killed.has(row.runDir!)));
		const slotNames = Array.from({ length: LIMIT }, (_, n) => `slot-${n}.json`);
		expect(records.filter((record) => !slotNames.includes(record.slot ?? "")).map((record) => record.runDir)).toEqual(
			[],
		);
		const handovers: string[] = [];
		for (const slot of slotNames) {
			const onSlot = records.filter((record) => record.slot === slot).sort((a, b) => a.claimedAt - b.claimedAt);
			for (let n = 1; n < onSlot.length; n++) {
				const [before, next] = [onSlot[n - 1]!, onSlot[n]!];
				const over = before.killed ? (before.lastEventAt ?? before.claimedAt) : before.endedAt;
				if (over === undefined || over > next.claimedAt)
					handovers.push(`${slot}: ${before.runDir} over at ${over}, ${next.runDir} claimed at ${next.claimedAt}`);
			}
		}
		expect(handovers).toEqual([]);
		// So at no instant did more than LIMIT runs hold a worker: the same, as one sweep over every run's span.
		const edges = records.flatMap((record) => [
			{ at: record.claimedAt, step: 1 },
			{ at: (record.killed ? record.lastEventAt : record.endedAt) ?? record.claimedAt, step: -1 },
		]);
		let holding = 0;
		let maxHolding = 0;
		for (const edge of edges.sort((a, b) => a.at - b.at || a.step - b.step)) {
			holding += edge.step;
			maxHolding = Math.max(maxHolding, holding);
		}
		expect(maxHolding).toBeLessThanOrEqual(LIMIT);
		expect(maxHolding).toBeGreaterThan(1);

		// The observer looked all along (each look is two /proc scans: at load 17 it managed 97 in a run).
		expect(samples).toBeGreaterThan(20);
		expect(maxWorkers).toBeGreaterThan(0);
		expect(maxWorkers, JSON.stringify(over)).toBeLessThanOrEqual(LIMIT);
		// Queued runs are files: at most the limit's runners with a run not over while dozens wait, and no
		// runner for a run that has not claimed its slot. (How many wait at once depends on how fast the
		// dispatchers enqueue against the runs: 21 at load 17. Runners past their end, still pumping, are
		// not bounded by the limit: 9 runners were alive at once at load 4, 5 of them with a run not over.)
		expect(maxQueued).toBeGreaterThan(2 * LIMIT);
		expect(maxLiveRunners, `${maxRunners} runners at most, finishing ones included`).toBeLessThanOrEqual(LIMIT);
		expect(maxLiveRunners).toBeGreaterThan(0);
		expect([...unclaimed]).toEqual([]);
		expect([...twice]).toEqual([]);

		// FIFO: when a run was claimed, no older run was still waiting in the queue.
		const claims = rows.map(
			(row) =>
				JSON.parse(readFileSync(join(row.runDir!, "claim.json"), "utf8")) as {
					olderWaiting?: number;
					purpose: string;
				},
		);
		expect(claims.every((claim) => claim.purpose === "start")).toBe(true);
		expect(claims.filter((claim) => claim.olderWaiting !== 0)).toEqual([]);

		// Nothing left: no slot file, no process carrying any of these runs' tags.
		expect(readdirSync(join(storeDir, "slots")).filter((n) => n.startsWith("slot-"))).toEqual([]);
		expect(runTaggedProcs(rows.map((row: BoardRow) => row.currentRunId!))).toEqual([]);
		expect(
			existsSync(join(storeDir, "queue")) && readdirSync(join(storeDir, "queue")).filter((n) => !n.startsWith(".")),
		).toEqual([]);
	}, 600_000);
});
