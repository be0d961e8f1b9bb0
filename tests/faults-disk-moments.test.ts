/**
 * A full disk at any moment of a run kills no worker and loses no tool output (issue #38). The store,
 * pi's session file with it, is a small tmpfs (root only: skipped with the reason elsewhere, failing
 * under CI=true), filled to the last byte at one moment of a real pi run:
 * - start: as the worker starts, before pi's first session write (pi made the file with "wx" and died:
 *   "ENOSPC", then "EEXIST" on the next try);
 * - turn: while the model answers (the assistant message and what follows are appends);
 * - tool: while a tool runs (its result is an append).
 * The worker goes on (the tool runs, its output reaches the runner), the session waits in memory
 * (worker/session-writes.ts), and when space returns the row completes with every entry in its session
 * file, whole lines in order, and the tool's output in its events.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isAlive } from "../runner/store/proc.mjs";
import { boardFor, readEvents, waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, waitFor, type TestAgent } from "../test-support/pi-harness.ts";
import { fillDisk } from "../test-support/fill-disk.ts";
import { commandFails, notRoot, requires } from "../test-support/requires.ts";

const agents: TestAgent[] = [];
const mounts: string[] = [];
afterAll(() => {
	for (const mount of mounts) commandFails("umount", ["-l", mount]);
	for (const agent of agents) agent.cleanup();
});

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8")) as { pid: number; start: string };

describe("a full disk at any moment of a run", () => {
	for (const moment of ["start", "turn", "tool"] as const)
		it(`${moment}: the worker goes on, and the row completes with its session and the tool's output once space returns`, async (ctx) => {
			requires(ctx, "root (mounting a small tmpfs)", notRoot());
			const agent = createTestAgent({});
			agents.push(agent);
			const store = join(agent.root, "store");
			mkdirSync(store, { mode: 0o700 });
			requires(
				ctx,
				"a tmpfs mount",
				commandFails("mount", ["-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", store]),
			);
			mounts.unshift(store);
			const answer = join(agent.root, "answer");
			const toolGate = join(agent.root, "tool-gate");
			const toolRan = join(agent.root, "tool-ran");
			const toolDone = join(agent.root, "tool-done");
			const command = `echo TOOL-OUTPUT-1; head -c 6000 /dev/zero | tr "\\0" x; echo; touch ${toolRan}; while [ ! -e ${toolGate} ]; do sleep 0.1; done; echo TOOL-OUTPUT-2; touch ${toolDone}`;
			agent.writeScript({
				rules: [
					{
						match: "DISK-MOMENT",
						steps: [
							{ waitForFile: answer, then: { toolCall: { name: "bash", args: { command } } } },
							{ text: `Done after the full disk. ${"All the words of a long answer. ".repeat(200)}` },
						],
					},
				],
			});
			const board = boardFor(agent);
			// pi compiles the extensions into the store's tmp/ on its first start (jiti's cache): a run before
			// warms it, as every store's first run does. A cold cache on a full disk fails pi's load
			// (the runner holds a worker's start while the disk is full; a fill during that load is left).
			if (moment === "start")
				await waitDone(board, (await board.dispatch({ prompt: "warm up", cwd: agent.cwd })).id, 90_000);
			const row = await board.dispatch({ prompt: "DISK-MOMENT run the tool", cwd: agent.cwd });
			const runDir = String(row.runDir);
			const session = join(store, "sessions", `${row.id}.jsonl`);
			let fillers: string[] = [];
			if (moment === "start") {
				await waitFor(() => existsSync(join(runDir, "worker.json")), "the worker to be spawned", 60_000, 5);
				fillers = fillDisk(store);
				// Filled before pi wrote its session: the prompt goes out only once pi has loaded.
				expect(existsSync(session)).toBe(false);
			} else {
				await waitFor(
					async () => (await board.get(row.id))?.live?.waitingSince,
					"the row to wait for its model",
					60_000,
				);
				expect(readFileSync(session, "utf8")).toContain("DISK-MOMENT");
			}
			if (moment === "turn") fillers = fillDisk(store);
			writeFileSync(answer, "");
			await waitFor(
				async () => existsSync(toolRan) || (await board.get(row.id))?.alive === false,
				"the tool to run",
				60_000,
			);
			expect(existsSync(toolRan), `the worker ended: ${(await board.get(row.id))?.error}`).toBe(true);
			if (moment === "tool") fillers = fillDisk(store);
			writeFileSync(toolGate, "");
			await waitFor(() => existsSync(toolDone), "the tool to finish", 60_000);
			// pi goes on to its last answer and holds its end until the session is written: alive meanwhile.
			const worker = readJson(join(runDir, "worker.json"));
			await new Promise((resolve) => setTimeout(resolve, 3000));
			expect(isAlive(worker.pid, worker.start), "the worker is alive while the disk is full").toBe(true);
			expect((await board.get(row.id))?.alive).toBe(true);

			for (const path of fillers) rmSync(path);
			const ended = await waitDone(board, row.id, 90_000);
			expect(ended.state, ended.error).toBe("completed");
			expect(ended.latestAssistant).toMatch(/^Done after the full disk\./);
			const events = readEvents(runDir);
			expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
			expect(JSON.stringify(events)).toContain("TOOL-OUTPUT-2");
			// The session: whole lines, each entry's parent written before it, the tool's result and the answer in it.
			const lines = readFileSync(session, "utf8").split("\n");
			expect(lines.pop()).toBe("");
			const entries = lines.map((line) => JSON.parse(line) as { id?: string; parentId?: string | null });
			const seen = new Set<string>();
			for (const entry of entries.slice(1)) {
				if (entry.parentId) expect(seen.has(entry.parentId)).toBe(true);
				if (entry.id) seen.add(entry.id);
			}
			const text = lines.join("\n");
			// What pi's session holds for this run (a user message, a tool call and its result, an answer).
			console.log(`${moment}: the session file, ${entries.length} entries, ${text.length + lines.length} bytes`);
			expect(text).toContain("TOOL-OUTPUT-2");
			expect(text).toContain("Done after the full disk.");
			expect(new Set(entries.map((entry) => entry.id)).size).toBe(entries.length);
		}, 240_000);
});
