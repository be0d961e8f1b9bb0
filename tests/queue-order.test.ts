/**
 * The queue's order under concurrent writers, driven step by step (no sleeps, no clocks): enqueuers
 * and pumpers are child processes stopped at the queue's step points (test-support/queue-actor.ts).
 * An entry's place is the moment it enters; a claimed entry that goes back (its claim could not be
 * written, its claimer died before its runner started) keeps its place; a claimer killed while it holds
 * the queue does not stop it; slots pass on only when free, whoever breaks or frees them. The FIFO
 * evidence is each claim's `olderWaiting` (0 in FIFO).
 */
import { spawn } from "node:child_process";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { returnDeadClaim } from "../runner/life/dead-claim.mjs";
import { derive, settleUnowned } from "../runner/life/orphan.mjs";
import { claimEntry, enqueue, pumpQueue, queuedNames, queueSteps } from "../runner/life/queue.mjs";
import { RUNNER_START_GRACE_MS, runOwner } from "../runner/life/run-owner.mjs";
import { releaseRunSlots, tryClaimSlot } from "../runner/life/slots.mjs";
import { processStartTime } from "../runner/store/proc.mjs";
import { initialStatus } from "../runner/life/state-rules.mjs";
import { runDirOf } from "../runner/store/store-layout.mjs";
import type { RunStatus } from "../src/board/engine/types.ts";

const ACTOR = join(dirname(fileURLToPath(import.meta.url)), "../test-support/queue-actor.ts");

const dirs: string[] = [];
function scratch(): string {
	const dir = mkdtempSync(join(tmpdir(), "pab-qorder-"));
	dirs.push(dir);
	return dir;
}
const children = new Set<ReturnType<typeof spawn>>();
afterAll(() => {
	for (const child of children) child.kill("SIGKILL");
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

/** A run prepared as the launcher leaves it before its entry: run.json and a queued status. */
function preparedRun(store: string, rowId: string): string {
	const runDir = runDirOf(store, rowId, `run-${rowId}`);
	mkdirSync(runDir, { recursive: true });
	writeFileSync(join(runDir, "status.json"), JSON.stringify(initialStatus(`run-${rowId}`, rowId, Date.now())));
	writeFileSync(join(runDir, "run.json"), "{}");
	return runDir;
}

interface Actor {
	/** Resolves with the first line (from its start) whose first word is one of `events`. */
	reached(...events: string[]): Promise<string>;
	/** Lets it go on from its pause point. */
	go(): void;
	/** What it printed after `done` (it has exited 0). */
	result(): Promise<unknown>;
	kill(): Promise<void>;
}

let actors = 0;
function actor(store: string, args: string[], steps: { pause?: string; fail?: string } = {}): Actor {
	const go = join(store, `go-${++actors}`);
	const child = spawn(process.execPath, ["--experimental-strip-types", "--no-warnings", ACTOR, store, ...args], {
		env: { ...process.env, QUEUE_PAUSE: steps.pause ?? "", QUEUE_FAIL: steps.fail ?? "", QUEUE_GO: go },
		stdio: ["ignore", "pipe", "pipe"],
	});
	children.add(child);
	const lines: string[] = [];
	let stderr = "";
	let exit: string | undefined;
	const waiters = new Set<() => void>();
	const changed = () => {
		for (const waiter of waiters) waiter();
	};
	let buffer = "";
	child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
		buffer += chunk;
		const parts = buffer.split("\n");
		buffer = parts.pop() ?? "";
		lines.push(...parts);
		changed();
	});
	child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
	child.on("close", (code, signal) => {
		children.delete(child);
		exit = `exited ${code ?? signal}${stderr ? `: ${stderr}` : ""}`;
		changed();
	});
	const reached = (...events: string[]) =>
		new Promise<string>((resolve, reject) => {
			const check = () => {
				const line = lines.find((l) => events.includes(l.split(" ")[0]!) || events.includes(l));
				if (line !== undefined) {
					waiters.delete(check);
					resolve(line.startsWith("done") ? "done" : line);
				} else if (exit !== undefined) {
					waiters.delete(check);
					reject(
						new Error(
							`actor ${args.join(" ")} ${exit} before ${events.join(" or ")}; it said: ${lines.join(" | ")}`,
						),
					);
				}
			};
			waiters.add(check);
			check();
		});
	return {
		reached,
		go: () => writeFileSync(go, ""),
		async result() {
			await reached("done");
			const line = lines.find((l) => l.startsWith("done "))!;
			return JSON.parse(line.slice("done ".length)) as unknown;
		},
		kill: () =>
			new Promise((resolve) => {
				if (exit !== undefined) return resolve();
				child.once("close", () => resolve());
				child.kill("SIGKILL");
			}),
	};
}

interface Claim {
	purpose: string;
	olderWaiting?: number;
}

/** The claim records of the store's runs, by run id. */
function claims(store: string): Record<string, Claim> {
	const out: Record<string, Claim> = {};
	for (const rowId of readdirSync(join(store, "rows"))) {
		const claim = join(runDirOf(store, rowId, `run-${rowId}`), "claim.json");
		if (existsSync(claim)) out[`run-${rowId}`] = JSON.parse(readFileSync(claim, "utf8")) as Claim;
	}
	return out;
}

const status = (runDir: string) => JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")) as RunStatus;
const runIdOf = (name: string) => /^\d{15}-(.+)\.json$/.exec(name)?.[1];
const pumpHere = (store: string, max: number) => pumpQueue(store, { maxConcurrent: max, node: "/bin/false", env: {} });

describe("queue order", () => {
	it("an entry's place is the moment it enters: a pump never starts a run while an older entry waits", async () => {
		const store = scratch();
		preparedRun(store, "a");
		preparedRun(store, "b");
		// a is named first and stops before it enters; b is named and placed; a pump looks.
		const first = actor(store, ["enqueue", "a"], { pause: "named" });
		await first.reached("paused named");
		const second = actor(store, ["enqueue", "b"]);
		await second.reached("done", "lock-busy");
		const pump = actor(store, ["pump", "1"], { pause: "claimed" });
		await pump.reached("paused claimed", "lock-busy", "done");
		// a enters while the pump holds what it claimed (if it claimed anything), then the pump goes on.
		first.go();
		await first.result();
		pump.go();
		await pump.result();
		await second.result();
		// Whatever is left starts as a finishing runner or a board read would start it.
		pumpHere(store, 1);

		expect(Object.entries(claims(store)).filter(([, claim]) => claim.olderWaiting !== 0)).toEqual([]);
		// a entered first, so a started first; b waits for the slot.
		expect(Object.keys(claims(store))).toEqual(["run-a"]);
		expect(queuedNames(store).map(runIdOf)).toEqual(["run-b"]);
	});

	it("a claimed entry that goes back (its claim cannot be written) keeps its place: no younger run starts while it is out", async () => {
		const store = scratch();
		for (const rowId of ["a", "b"]) {
			preparedRun(store, rowId);
			enqueue(store, { rowId, runId: `run-${rowId}` });
		}
		// The first pump takes a out of the queue and stops there; its claim will fail (a full disk).
		const failing = actor(store, ["pump", "2"], { pause: "claimed", fail: "claim-write" });
		await failing.reached("paused claimed");
		const other = actor(store, ["pump", "2"]);
		await other.reached("done", "lock-busy");
		failing.go();
		expect(await failing.result()).toMatchObject({ started: [], error: expect.stringContaining("ENOSPC") });

		// a went back to its place before anyone looked without it: it starts first, then b.
		expect(await other.result()).toEqual({ started: ["run-a", "run-b"] });
		expect(queuedNames(store)).toEqual([]);
		expect(Object.values(claims(store)).map((claim) => claim.olderWaiting)).toEqual([0, 0]);
	});

	it("a pump's slot is its own until it names the run it starts: recording the end of a run it listed does not free it", async () => {
		const store = scratch();
		const runDirs = ["x", "y"].map((rowId) => {
			const runDir = preparedRun(store, rowId);
			enqueue(store, { rowId, runId: `run-${rowId}` });
			return runDir;
		});
		// The pump listed x and y and holds the only slot; then x is claimed elsewhere and its end recorded.
		const pump = actor(store, ["pump", "1"], { pause: "slot" });
		await pump.reached("paused slot");
		expect(claimEntry(store, queuedNames(store)[0]!, runDirs[0]!, "stop")).toBe(true);
		releaseRunSlots(store, "run-x");
		// Nobody else gets that slot while the pump holds it.
		const me = { pid: process.pid, start: processStartTime(process.pid), runId: "run-z" };
		expect(tryClaimSlot(join(store, "slots"), 1, me)).toBeUndefined();
		pump.go();
		expect(await pump.result()).toEqual({ started: ["run-y"] });
		expect(JSON.parse(readFileSync(join(store, "slots", "slot-0.json"), "utf8"))).toMatchObject({
			runId: "run-y",
			rowId: "y",
		});
	});

	it("a slot judged stale is broken only as judged: a breaker that judged slowly does not take the slot another breaker re-took", () => {
		const store = scratch();
		const slots = join(store, "slots");
		mkdirSync(slots);
		// Its claimer and run are gone: stale.
		writeFileSync(join(slots, "slot-0.json"), JSON.stringify({ pid: 999_999, start: "1", runId: "gone" }));
		const me = (runId: string) => ({ pid: process.pid, start: processStartTime(process.pid), runId });
		// The slow breaker judged it stale; before its turn to break it, a quick one breaks it and claims it.
		const slow = tryClaimSlot(slots, 1, me("run-slow"), undefined, (breakIt) => {
			expect(tryClaimSlot(slots, 1, me("run-quick"))).toBe(join(slots, "slot-0.json"));
			breakIt();
		});
		expect(slow).toBeUndefined();
		expect(JSON.parse(readFileSync(join(slots, "slot-0.json"), "utf8"))).toMatchObject({ runId: "run-quick" });
		expect(readdirSync(slots)).toEqual(["slot-0.json"]);
	});

	it("entries in the same millisecond, or after the clock went back, keep the order they entered in", () => {
		const store = scratch();
		const now = vi.spyOn(Date, "now").mockReturnValue(1_000_000);
		try {
			for (const rowId of ["z", "a"]) enqueue(store, { rowId, runId: `run-${rowId}` });
			now.mockReturnValue(900_000);
			enqueue(store, { rowId: "m", runId: "run-m" });
		} finally {
			now.mockRestore();
		}
		expect(queuedNames(store).map(runIdOf)).toEqual(["run-z", "run-a", "run-m"]);
	});

	it("a claimed run is dated by its claim, not by its entry: its readers give it the start grace from then", async () => {
		const store = scratch();
		const runDir = preparedRun(store, "a");
		enqueue(store, { rowId: "a", runId: "run-a" });
		// It waited an hour in the queue.
		const hourAgo = new Date(Date.now() - 3_600_000);
		utimesSync(join(store, "queue", queuedNames(store)[0]!), hourAgo, hourAgo);
		const pump = actor(store, ["pump", "1"], { pause: "claimed" });
		await pump.reached("paused claimed");
		// Out of the queue, its claim not yet written: starting, not a run without an owner.
		expect(runOwner(store, runDir, status(runDir))).toBe("starting");
		pump.go();
		await pump.result();
		expect(runOwner(store, runDir, status(runDir))).toBe("starting");
	});

	for (const [when, point] of [
		["between taking its entry and writing its claim (holding the queue's lock)", "claimed"],
		["after its claim, before its runner", "spawn"],
	] as const) {
		it(`a claimer killed ${when} does not stop the queue, and its run goes back to its place`, async () => {
			const store = scratch();
			const runDirs = ["a", "b"].map((rowId) => {
				const runDir = preparedRun(store, rowId);
				enqueue(store, { rowId, runId: `run-${rowId}` });
				return runDir;
			});
			const names = queuedNames(store);
			const killed = actor(store, ["pump", "2"], { pause: point });
			await killed.reached(`paused ${point}`);
			await killed.kill();

			// Whatever it held (the queue's lock, a slot), the next entry starts.
			expect(pumpHere(store, 2)).toEqual({ started: ["run-b"] });
			expect(queuedNames(store)).toEqual([]);
			const a = runDirs[0]!;
			// a is starting for the start grace (its runner may be on its way), then nobody's: its reader
			// shows it queued, going back. (The grace passes: its claim is made older.)
			expect(runOwner(store, a, status(a))).toBe("starting");
			preparedRun(store, "c");
			enqueue(store, { rowId: "c", runId: "run-c" });
			const graceAgo = new Date(Date.now() - RUNNER_START_GRACE_MS - 1000);
			utimesSync(join(a, "claim.json"), graceAgo, graceAgo);
			expect(runOwner(store, a, status(a))).toBe("none");
			expect(derive(store, a, status(a), {})).toMatchObject({ status: { state: "queued" }, pending: "requeue" });

			// Its reader puts it back under its own name, ahead of c, which entered after it.
			expect(await settleUnowned(store, a, { spawnWith: { node: "/bin/false", env: {} } })).toBe("requeued");
			expect(queuedNames(store)).toEqual([names[0], expect.stringMatching(/-run-c\.json$/)]);
			expect(existsSync(join(a, "claim.json"))).toBe(false);
			expect(runOwner(store, a, status(a))).toBe("queue");
			// The slot its dead claimer named for it is freed with it: b's alone is left.
			expect(
				readdirSync(join(store, "slots")).map(
					(name) => (JSON.parse(readFileSync(join(store, "slots", name), "utf8")) as { runId: string }).runId,
				),
			).toEqual(["run-b"]);
			// a starts next, as the oldest waiting; c waits.
			expect(pumpHere(store, 2)).toEqual({ started: ["run-a"] });
			expect(claims(store)["run-a"]).toMatchObject({ purpose: "start", olderWaiting: 0 });
			expect(queuedNames(store).map(runIdOf)).toEqual(["run-c"]);
		});
	}

	it("a live claimer's run, one a dead stopper claimed, and one whose runner started do not go back", () => {
		const store = scratch();
		const [a, b, c] = ["a", "b", "c"].map((rowId) => {
			const runDir = preparedRun(store, rowId);
			enqueue(store, { rowId, runId: `run-${rowId}` });
			return runDir;
		});
		const [nameA, nameB, nameC] = queuedNames(store);
		expect(claimEntry(store, nameA!, a!, "start")).toBe(true);
		expect(returnDeadClaim(store, a!)).toBe(false);
		expect(claimEntry(store, nameB!, b!, "stop")).toBe(true);
		writeFileSync(join(b!, "claim.json"), JSON.stringify({ ...deadClaim("spawn", nameB!), purpose: "stop" }));
		expect(returnDeadClaim(store, b!)).toBe(false);
		expect(claimEntry(store, nameC!, c!, "start")).toBe(true);
		writeFileSync(join(c!, "claim.json"), JSON.stringify(deadClaim("spawn", nameC!)));
		writeFileSync(join(c!, "runner.json"), JSON.stringify({ pid: 999_999, start: "1" }));
		expect(returnDeadClaim(store, c!)).toBe(false);
		expect(queuedNames(store)).toEqual([]);
	});

	it("a run whose runner cannot be spawned fails with the reason and never goes back", () => {
		const store = scratch();
		const runDir = preparedRun(store, "a");
		enqueue(store, { rowId: "a", runId: "run-a" });
		// A node path spawn refuses at once.
		const result = pumpQueue(store, { maxConcurrent: 1, node: "bad\0node", env: {} });
		expect(result.error).toMatch(/cannot start a runner in .*run-a/);
		expect(status(runDir)).toMatchObject({ state: "failed", errorCode: "start-failed", error: result.error });
		expect(returnDeadClaim(store, runDir)).toBe(false);
		expect(readdirSync(join(store, "slots"))).toEqual([]);
		expect(queuedNames(store)).toEqual([]);
	});

	it("a run moving between its entry and its claim is always found: its reader looks for the entry, the claim, the entry", () => {
		const store = scratch();
		const runDir = preparedRun(store, "a");
		// Dispatched long ago: only its entry or its claim says who owns it.
		writeFileSync(join(runDir, "status.json"), JSON.stringify(initialStatus("run-a", "a", Date.now() - 3_600_000)));
		enqueue(store, { rowId: "a", runId: "run-a" });
		const name = queuedNames(store)[0]!;
		const entry = readFileSync(join(store, "queue", name));
		// Once, between the reader's looks: `move` runs.
		const owner = (move: () => void) => {
			queueSteps.at = (point) => {
				if (point !== "owner") return;
				queueSteps.at = () => undefined;
				move();
			};
			try {
				return runOwner(store, runDir, status(runDir));
			} finally {
				queueSteps.at = () => undefined;
			}
		};
		// A pump claims it (after the reader's first look; if that look found the entry, no later one runs).
		const claim = () => expect(claimEntry(store, name, runDir, "start")).toBe(true);
		expect(owner(claim)).not.toBe("none");
		if (!existsSync(join(runDir, "claim.json"))) claim();
		expect(runOwner(store, runDir, status(runDir))).toBe("starting");
		// It goes back (a claim that could not be written, a dead claimer's run): the entry, then no claim.
		expect(
			owner(() => {
				writeFileSync(join(store, "queue", name), entry);
				rmSync(join(runDir, "claim.json"));
			}),
		).toBe("queue");
	});

	it("a reader recording a dead run's end frees its slot in its turn: never the slot a pump broke and took meanwhile", async () => {
		const store = scratch();
		mkdirSync(join(store, "slots"));
		// x's runner was killed: its slot is stale (claimer gone, no process of x).
		writeFileSync(join(store, "slots", "slot-0.json"), JSON.stringify({ pid: 999_999, start: "1", runId: "run-x" }));
		preparedRun(store, "y");
		enqueue(store, { rowId: "y", runId: "run-y" });
		// The reader found that x's slot names x and stops before it frees it; a pump comes to break that
		// slot and start y on it.
		const reader = actor(store, ["release", "run-x"], { pause: "release" });
		await reader.reached("paused release");
		const pump = actor(store, ["pump", "1"]);
		await pump.reached("done", "lock-busy");
		reader.go();
		await reader.result();
		expect(await pump.result()).toEqual({ started: ["run-y"] });
		// y keeps its slot.
		expect(JSON.parse(readFileSync(join(store, "slots", "slot-0.json"), "utf8"))).toMatchObject({ runId: "run-y" });
	});
});

/** The claim a killed claimer leaves at `point`: the entry itself, or a claim by a process that is gone. */
function deadClaim(point: "claimed" | "spawn", name: string): object {
	const [, at, runId] = /^(\d{15})-(.+)\.json$/.exec(name)!;
	const entry = { rowId: runId!.replace(/^run-/, ""), runId, at: Number(at) };
	return point === "claimed"
		? entry
		: {
				by: 999_999,
				start: "1",
				purpose: "start",
				at: Date.now(),
				olderWaiting: 0,
				slot: "slot-0.json",
				queued: entry,
			};
}
