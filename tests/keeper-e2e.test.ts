/**
 * The store's keeper (issue #38, docs/engine.md "The keeper"): with no board open and no `list`, the
 * queue moves after a runner dies without a word, a run queued behind a full disk starts when space
 * returns, there is never more than one keeper, and it exits once nothing is left to keep. The test
 * dispatches from a script and then only reads files: nothing of the board runs after the dispatch.
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ensureKeeper, KEEPER_PATH } from "../runner/keeper/ensure-keeper.mjs";
import { keeperAlive, keeperPath } from "../runner/keeper/keeper-file.mjs";
import { isAlive } from "../runner/store/proc.mjs";
import { boardFor } from "../test-support/board-helpers.ts";
import { createTestAgent, type TestAgent, waitFor } from "../test-support/pi-harness.ts";
import { scanProcs } from "../test-support/proc-scan.ts";
import { commandFails, notRoot, requires } from "../test-support/requires.ts";

const agents: TestAgent[] = [];
const mounts: string[] = [];
afterAll(() => {
	for (const mount of mounts) commandFails("umount", ["-l", mount]);
	for (const agent of agents) agent.cleanup();
});

type Status = { state: string; endedAt?: number; errorCode?: string; error?: string };

/** A run's status as a reader with no board would see it: the file, nothing derived, nothing written. */
function statusOf(runDir: string): Status | undefined {
	try {
		return JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")) as Status;
	} catch {
		return undefined;
	}
}

function keepersOf(store: string): number[] {
	return scanProcs((argv) => argv.some((a) => a === KEEPER_PATH) && argv.includes(store)).map((p) => p.pid);
}

function recordOf(path: string): { pid: number; start: string } {
	return JSON.parse(readFileSync(path, "utf8")) as { pid: number; start: string };
}

describe("the keeper: runs move with no board open", () => {
	it("a runner SIGKILLed while another run waits: the dead run is recorded ended and the waiting one starts; one keeper, gone when idle", async () => {
		const agent = createTestAgent({});
		agents.push(agent);
		const store = join(agent.root, "store");
		const gate = join(agent.root, "gate");
		agent.writeScript({
			rules: [{ match: "KEEPER-HOLD", steps: [{ waitForFile: gate, then: { text: "never" } }] }],
			fallback: [{ text: "Waiting row done." }],
		});
		const board = boardFor(agent, { maxConcurrent: 1 });
		const held = await board.dispatch({ prompt: "KEEPER-HOLD wait for the gate", cwd: agent.cwd });
		const heldDir = String(held.runDir);
		await waitFor(() => existsSync(join(heldDir, "worker.json")), "the held row's worker", 60_000);
		const waiting = await board.dispatch({ prompt: "KEEPER-NEXT the waiting row", cwd: agent.cwd });
		expect(waiting.state).toBe("queued");
		const waitingDir = String(waiting.runDir);

		// Never two: more starters race the one running (ensureKeeper twice, three bare keepers at once).
		await waitFor(() => keeperAlive(store), "the keeper the dispatch started");
		const options = { node: process.execPath, env: agent.env, maxConcurrent: 1 };
		ensureKeeper(store, options);
		ensureKeeper(store, options);
		const log = openSync(join(store, "keeper.log"), "a");
		for (let i = 0; i < 3; i++)
			spawn(process.execPath, [KEEPER_PATH, store, "1"], {
				stdio: ["ignore", log, log],
				env: agent.env,
				detached: true,
			}).unref();
		closeSync(log);
		const keeper = recordOf(keeperPath(store));
		// The losers exit as soon as they have loaded and found keeper.json held (a while on a loaded machine).
		await waitFor(() => keepersOf(store).length === 1, "the starters that lost to exit", 30_000);
		expect(keepersOf(store)).toEqual([keeper.pid]);
		expect(recordOf(keeperPath(store))).toEqual(keeper);
		// Only one ever ran its duties: a keeper says "started" once it holds keeper.json.
		expect(readFileSync(join(store, "keeper.log"), "utf8").match(/: started$/gm)).toHaveLength(1);

		// The runner dies without a word; the board is never asked anything again.
		const runner = recordOf(join(heldDir, "runner.json"));
		process.kill(runner.pid, "SIGKILL");
		const killedAt = Date.now();
		const ended = await waitFor(
			() => {
				const status = statusOf(heldDir);
				return status?.endedAt ? status : undefined;
			},
			"the dead run's end to be recorded",
			60_000,
		);
		const endedMs = Date.now() - killedAt;
		expect(ended).toMatchObject({ state: "failed", errorCode: "runner-died" });
		await waitFor(() => existsSync(join(waitingDir, "runner.json")), "the waiting run to start", 60_000);
		const startedMs = Date.now() - killedAt;
		const done = await waitFor(
			() => {
				const status = statusOf(waitingDir);
				return status?.endedAt ? status : undefined;
			},
			"the waiting run to finish",
			60_000,
		);
		expect(done.state, done.error).toBe("completed");
		console.log(`keeper: dead run recorded ended after ${endedMs} ms, waiting run started after ${startedMs} ms`);

		// Nothing left to keep: it gives up keeper.json and exits.
		await waitFor(() => !isAlive(keeper.pid, keeper.start), "the idle keeper to exit", 30_000);
		expect(existsSync(keeperPath(store))).toBe(false);
		expect(keepersOf(store)).toEqual([]);
	}, 180_000);

	it("a run queued behind a full disk starts when space returns", async (ctx) => {
		requires(ctx, "root (mounting a small tmpfs)", notRoot());
		const agent = createTestAgent({});
		agents.push(agent);
		const store = join(agent.root, "store");
		mkdirSync(store, { mode: 0o700 });
		requires(ctx, "a tmpfs mount", commandFails("mount", ["-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", store]));
		mounts.unshift(store);
		// pi's own session file stays on the big disk (faults-disk.test.ts): what is ours is the queue.
		const sessions = join(agent.root, "sessions");
		mkdirSync(sessions, { mode: 0o700 });
		mkdirSync(join(store, "sessions"), { mode: 0o700 });
		expect(commandFails("mount", ["--bind", sessions, join(store, "sessions")])).toBeUndefined();
		mounts.unshift(join(store, "sessions"));
		agent.writeScript({ rules: [], fallback: [{ text: "Started once space returned." }] });
		const board = boardFor(agent, { maxConcurrent: 2 });
		// Full, with room left for a dispatch's few files but under the queue's 256 KiB floor.
		const reserve = join(store, "reserve");
		writeFileSync(reserve, Buffer.alloc(160 * 1024, 1));
		const fillers = fillDisk(store);
		rmSync(reserve);
		const row = await board.dispatch({ prompt: "KEEPER-DISK start when space returns", cwd: agent.cwd });
		expect(row.state).toBe("queued");
		const runDir = String(row.runDir);
		await waitFor(
			() =>
				existsSync(join(store, "keeper.log")) && /disk full/.test(readFileSync(join(store, "keeper.log"), "utf8")),
			"the keeper to find the disk full",
			30_000,
		);
		expect(existsSync(join(runDir, "runner.json"))).toBe(false);
		expect(statusOf(runDir)?.state).toBe("queued");

		for (const path of fillers) rmSync(path);
		const freedAt = Date.now();
		await waitFor(() => existsSync(join(runDir, "runner.json")), "the queued run to start", 60_000);
		console.log(`keeper: queued run started ${Date.now() - freedAt} ms after space returned`);
		const done = await waitFor(
			() => {
				const status = statusOf(runDir);
				return status?.endedAt ? status : undefined;
			},
			"the run to finish",
			60_000,
		);
		expect(done.state, done.error).toBe("completed");
	}, 180_000);
});

/** Writes filler files until the file system refuses; returns them. */
function fillDisk(dir: string): string[] {
	const fillers: string[] = [];
	for (let size = 1024 * 1024; size >= 512; ) {
		const path = join(dir, `filler-${fillers.length}`);
		try {
			writeFileSync(path, Buffer.alloc(size, 1));
			fillers.push(path);
		} catch (error) {
			expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
			rmSync(path, { force: true });
			size = Math.floor(size / 2);
		}
	}
	return fillers;
}
