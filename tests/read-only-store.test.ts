/**
 * Reads only read: on a store this user can only read (a bind mount remounted read-only), holding a
 * run whose runner died, a queued run, a live row, a target run whose link died and a container target,
 * the real pi's `list` and `show` and the board's first paint print every row as it is (the dead
 * runner's row failed at once, "runner died"), change nothing on disk and start no process: no runner,
 * no link, not even the container engine that reconciles leftovers (a podman on PATH that would leave
 * a mark). The live row's process is left alone.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { enqueue } from "../runner/life/queue.mjs";
import { isAlive, processStartTime } from "../runner/store/proc.mjs";
import { storePaths } from "../src/board/engine/paths.ts";
import { createBoardService } from "../src/board/engine/service.ts";
import { BoardFeed } from "../src/board/view-model/feed.ts";
import { fileSnapshot, writeRow } from "../test-support/hardening-fixtures.ts";
import { createTestAgent, PI_CLI, runPi, type TestAgent } from "../test-support/pi-harness.ts";
import { scanProcs } from "../test-support/proc-scan.ts";
import { commandFails, notRoot, requires } from "../test-support/requires.ts";
import { boardOn } from "../test-support/board-on.ts";

const agents: TestAgent[] = [];
const mounts: string[] = [];
const children: number[] = [];
afterAll(() => {
	for (const mount of mounts.reverse()) commandFails("umount", ["-l", mount]);
	for (const pid of children) process.kill(pid, "SIGKILL");
	for (const agent of agents) agent.cleanup();
});

/** Runners and links of a store (anything started for its runs names a file under it). */
const started = (store: string) =>
	scanProcs(
		(argv) =>
			argv.some((a) => /(job-runner|target-link)\.mjs$/.test(a)) && argv.some((a) => a.startsWith(`${store}/`)),
	);

describe("a store this user can only read", () => {
	it("list, show and the board's first paint print every row, change nothing and start no process", async (ctx) => {
		requires(ctx, "root (mount)", notRoot());
		const agent = createTestAgent({ script: { rules: [], fallback: [{ text: "Done." }] } });
		agents.push(agent);
		const store = join(agent.agentDir, "agent-board");
		mkdirSync(join(store, "rows"), { recursive: true, mode: 0o700 });
		const paths = storePaths(store);
		const old = Date.now() - 60_000;

		writeRow(paths, "done-row");
		// pid 999999 with this start time is nobody: the runner is gone, and nobody recorded it.
		const orphan = writeRow(paths, "dead-runner", { state: "working", at: old });
		writeFileSync(join(orphan.runDir, "runner.json"), JSON.stringify({ pid: 999_999, start: "1" }));
		const queued = writeRow(paths, "in-queue", { state: "queued" });
		writeFileSync(join(queued.runDir, "run.json"), "{}");
		enqueue(store, { rowId: queued.id, runId: queued.runId });
		const live = writeRow(paths, "live-row", { state: "working" });
		const sleeper = spawn("sleep", ["300"], { stdio: "ignore" });
		children.push(sleeper.pid ?? 0);
		const sleeperStart = processStartTime(sleeper.pid ?? 0);
		writeFileSync(join(live.runDir, "runner.json"), JSON.stringify({ pid: sleeper.pid, start: sleeperStart }));
		// A target run whose link died: a writer would start a new link for it.
		const relink = writeRow(paths, "lost-link", { state: "working", at: old, metaPatch: { target: "box" } });
		writeFileSync(join(relink.runDir, "runner.json"), JSON.stringify({ pid: 999_998, start: "1" }));
		writeFileSync(
			join(store, "config.json"),
			JSON.stringify({
				version: 1,
				targets: { box: { kind: "container", engine: "podman", image: "w:1", max: 2, env: [] } },
			}),
		);
		// The engine the reconcile of leftovers would run: a podman that leaves a mark outside the store.
		const bin = join(agent.root, "bin");
		const engineUsed = join(agent.root, "podman-was-run");
		mkdirSync(bin);
		writeFileSync(join(bin, "podman"), `#!/bin/sh\ntouch '${engineUsed}'\nexit 1\n`);
		chmodSync(join(bin, "podman"), 0o755);
		const path = `${bin}:${process.env.PATH ?? ""}`;

		requires(ctx, "mount --bind", commandFails("mount", ["--bind", store, store]));
		mounts.push(store);
		expect(commandFails("mount", ["-o", "remount,bind,ro", store])).toBeUndefined();
		expect(commandFails("touch", [join(store, "probe")])).toMatch(/Read-only file system/);
		const before = fileSnapshot(store);

		const list = await runPi(agent, { args: ["-p", "/agent-board list"], env: { PATH: path } });
		expect(list.code, list.stderr).toBe(0);
		expect(list.stdout).toMatch(/^done-row\s+completed\s/m);
		expect(list.stdout).toMatch(/^dead-runner\s+failed\s.*Failed: runner died/m);
		expect(list.stdout).toMatch(/^in-queue\s+queued\s/m);
		expect(list.stdout).toMatch(/^live-row\s+working\s/m);
		expect(list.stdout).toMatch(/^lost-link\s+working\s/m);
		const shown = await runPi(agent, { args: ["-p", "/agent-board show dead-runner"], env: { PATH: path } });
		expect(shown.code, shown.stderr).toBe(0);
		expect(shown.stdout).toContain("state:     failed");
		expect(shown.stdout).toContain("error:     runner died");

		// The board's first paint, on the same store, in this process.
		const engine = createBoardService({
			storeDir: store,
			env: { ...agent.env, PATH: path },
			piCommand: [process.execPath, PI_CLI],
		});
		const feed = new BoardFeed(() => engine);
		const { dash } = boardOn(engine, { rows: 30, cwd: agent.cwd, feed });
		try {
			await dash.start();
			await feed.refresh("all");
			const screen = dash.render(120).join("\n");
			for (const name of ["row done-row", "row dead-runner", "row in-queue", "row live-row", "row lost-link"])
				expect(screen).toContain(name);
			expect(screen).toMatch(/Failed: runner died/);
		} finally {
			dash.dispose();
			feed.stop();
		}

		expect(fileSnapshot(store)).toEqual(before);
		expect(started(store)).toEqual([]);
		expect(existsSync(engineUsed)).toBe(false);
		expect(isAlive(sleeper.pid, sleeperStart)).toBe(true);
	}, 120_000);
});
