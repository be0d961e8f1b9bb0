/**
 * Container rows that hold and never lose their work (#24 items 2 and 6), with real podman and the
 * offline worker image: a killed `podman wait` client, or a killed conmon, is not a stop (the row keeps
 * running and completes, its files in the local worktree); a container whose processes die with its
 * monitor gone fails with that reason, and what its workspace holds still comes back (a one-shot
 * snapshot); a `.git` replaced by a gitdir file says "work not fetched"; a worker killed by the OOM
 * killer says "out of memory (limit 256m)"; `podman stop` and `rm -f` from outside say the container
 * was killed from outside.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { rowWhere as rowWhereOn, waitDone } from "../test-support/board-helpers.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { startModelServer, type ModelServer, writeAgentDir } from "../test-support/model-server.ts";
import { PI_CLI, waitFor } from "../test-support/pi-harness.ts";
import { podmanMissing, requires } from "../test-support/requires.ts";
import { containersOfStore, procsMentioning, removeContainersOfStore } from "../test-support/target-helpers.ts";
import { ensureWorkerImage } from "../test-support/worker-image.ts";

const missing = podmanMissing();
let model: ModelServer;
let root: string;
let store: string;
let repo: string;
let board: BoardEngine;
const agentDirBefore = process.env.PI_CODING_AGENT_DIR;

beforeAll(async () => {
	if (missing) return;
	const image = (await ensureWorkerImage()).tag;
	model = await startModelServer();
	root = mkdtempSync(join(tmpdir(), "pab-ctr-faults-"));
	store = join(root, "store");
	const agentDir = writeAgentDir(model, join(root, "agent"));
	process.env.PI_CODING_AGENT_DIR = agentDir;
	repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
	board = createBoardService({ storeDir: store, piCommand: [process.execPath, PI_CLI], env: process.env });
	await board.targets.add("box", { kind: "container", engine: "podman", image, network: "host" });
	await board.targets.add("mem", { kind: "container", engine: "podman", image, network: "host", memory: "256m" });
}, 300_000);

afterAll(async () => {
	if (missing) return;
	removeContainersOfStore(store);
	process.env.PI_CODING_AGENT_DIR = agentDirBefore;
	await model?.close();
	if (root) rmSync(root, { recursive: true, force: true });
});

const workspace = (row: BoardRow, target = "box") => join(store, "targets", target, "work", row.id);
const inspect = (row: BoardRow, format: string) =>
	spawnSync("podman", ["inspect", "--format", format, `ab-${row.currentRunId}`], { encoding: "utf8" }).stdout.trim();

const rowWhere = (id: string, what: string, test: (row: BoardRow) => boolean, timeoutMs = 90_000) =>
	rowWhereOn(board, id, what, test, timeoutMs);

/** Processes of ours on this machine (any argv word) whose command is `command` and that name the run's container. */
function enginePids(row: BoardRow, command: string): number[] {
	return procsMentioning(`ab-${row.currentRunId}`)
		.filter((p) => p.argv[0]?.endsWith(command) && (command !== "podman" || p.argv.includes("wait")))
		.map((p) => p.pid);
}

const HOLD = {
	match: "HOLD",
	steps: [
		{
			toolCall: {
				name: "bash",
				args: {
					command: "echo one > one.txt && while [ ! -e .git/release ]; do sleep 0.1; done && echo two > two.txt",
				},
			},
		},
		{ text: "Kept going." },
	],
};

/** A row whose tool wrote one.txt and waits for .git/release in its workspace. */
async function holding(what: string): Promise<BoardRow> {
	const row = await board.dispatch({ prompt: `HOLD through ${what}`, cwd: repo, target: "box" });
	await rowWhere(row.id, "the tool to run in the container", (r) => r.live?.tool?.name === "bash");
	await waitFor(() => existsSync(join(workspace(row), "one.txt")) || undefined, "the first file in the workspace");
	return (await board.get(row.id)) as BoardRow;
}

/** Still running, by the engine's word and the row's. */
async function stillRunning(row: BoardRow): Promise<void> {
	expect(inspect(row, "{{.State.Running}}")).toBe("true");
	expect(await board.get(row.id)).toMatchObject({ state: "working", alive: true });
}

/** Released: it completes, and the file it wrote after is in the local worktree. */
async function completes(row: BoardRow): Promise<void> {
	writeFileSync(join(workspace(row), ".git", "release"), "");
	const done = await waitDone(board, row.id, 90_000);
	expect(done).toMatchObject({ state: "completed", latestAssistant: "Kept going." });
	expect(readFileSync(join(done.worktreePath ?? "", "two.txt"), "utf8")).toBe("two\n");
}

describe("container rows that hold", () => {
	it("keeps running when our podman wait client is killed, and its work comes back", async (ctx) => {
		requires(ctx, "podman", missing);
		model.setScript({ rules: [HOLD] });
		const row = await holding("a killed wait client");
		// Our `podman wait` client dies: not a stop. The link waits again; the container goes on.
		const waitClients = enginePids(row, "podman");
		expect(waitClients.length).toBe(1);
		for (const pid of waitClients) process.kill(pid, "SIGKILL");
		await waitFor(
			() => enginePids(row, "podman").some((pid) => !waitClients.includes(pid)) || undefined,
			"a new wait client",
		);
		await stillRunning(row);
		await completes(row);
	}, 180_000);

	it("keeps running when conmon is killed, ends when the container does, and its work comes back", async (ctx) => {
		requires(ctx, "podman", missing);
		model.setScript({ rules: [HOLD] });
		const row = await holding("a killed conmon");
		// conmon dies: podman keeps saying "running", and its wait would never return.
		const conmon = enginePids(row, "conmon");
		expect(conmon.length).toBe(1);
		for (const pid of conmon) process.kill(pid, "SIGKILL");
		await stillRunning(row);
		await completes(row);
	}, 180_000);

	it("fails a container that dies with its monitor gone, with why, and brings its work back", async (ctx) => {
		requires(ctx, "podman", missing);
		model.setScript({ rules: [HOLD] });
		const row = await holding("a dead container");
		for (const pid of enginePids(row, "conmon")) process.kill(pid, "SIGKILL");
		// Its first process, and so everything in it, dies: nothing records its end inside.
		process.kill(Number(inspect(row, "{{.State.Pid}}")), "SIGKILL");
		const died = await waitDone(board, row.id, 90_000);
		expect(died).toMatchObject({
			state: "failed",
			errorCode: "runner-died",
			error: "its container ended and its engine lost track of it (its monitor, conmon, is gone)",
		});
		expect(readFileSync(join(died.worktreePath ?? "", "one.txt"), "utf8")).toBe("one\n");
		// The containers podman lost track of go with the board's reconcile, like any it no longer needs.
		const later = createBoardService({ storeDir: store, piCommand: [process.execPath, PI_CLI], env: process.env });
		await waitFor(
			async () => {
				await later.supervise();
				return containersOfStore(store).every((name) => !name.startsWith("ab-run-")) || undefined;
			},
			"no run container left",
			90_000,
		);
	}, 180_000);

	it("says work not fetched when the agent replaced .git with a gitdir file", async (ctx) => {
		requires(ctx, "podman", missing);
		model.setScript({
			rules: [
				{
					match: "GITDIR",
					steps: [
						{
							toolCall: {
								name: "bash",
								args: { command: "echo w > w.txt && mv .git .git-moved && echo 'gitdir: .git-moved' > .git" },
							},
						},
						{ text: "Moved it." },
					],
				},
			],
		});
		const row = await board.dispatch({ prompt: "GITDIR replace it", cwd: repo, target: "box" });
		const done = await waitDone(board, row.id, 120_000);
		expect(done).toMatchObject({ state: "failed", errorCode: "work-not-fetched" });
		expect(done.error).toBe(
			`work not fetched: ${join(workspace(row), ".git")} is not a directory any more (replaced from inside the container): nothing fetched, the workspace is kept (the run ended completed on box)`,
		);
	}, 180_000);

	it("says out of memory at the limit when the OOM killer takes the worker", async (ctx) => {
		requires(ctx, "podman", missing);
		// The worker's score raised, then a tool eats the container's memory: the kernel kills the worker.
		model.setScript({
			rules: [
				{
					match: "MEMORY",
					steps: [
						{
							toolCall: {
								name: "bash",
								args: {
									command: `echo 1000 > /proc/$PPID/oom_score_adj && node -e "const a = []; for (;;) a.push(Buffer.alloc(1e7, 1))"`,
								},
							},
						},
						{ text: "never" },
					],
				},
			],
		});
		const row = await board.dispatch({ prompt: "MEMORY eat it", cwd: repo, target: "mem" });
		const done = await waitDone(board, row.id, 120_000);
		expect(done).toMatchObject({
			state: "failed",
			errorCode: "out-of-memory",
			error: "out of memory (limit 256m): the kernel killed the worker",
		});
	}, 180_000);

	it("says killed from outside for podman stop and rm -f", async (ctx) => {
		requires(ctx, "podman", missing);
		model.setScript({
			rules: [
				{
					match: "OUTSIDE",
					steps: [{ toolCall: { name: "bash", args: { command: "sleep 300" } } }, { text: "never" }],
				},
			],
		});
		const rows = await Promise.all(
			["stop", "rm -f"].map((how) => board.dispatch({ prompt: `OUTSIDE ${how}`, cwd: repo, target: "box" })),
		);
		for (const row of rows)
			await rowWhere(row.id, "the tool to run in the container", (r) => r.live?.tool?.name === "bash");
		const [stopped, removed] = (await Promise.all(rows.map((row) => board.get(row.id)))) as [BoardRow, BoardRow];
		spawnSync("podman", ["stop", `ab-${stopped.currentRunId}`], { stdio: "ignore" });
		spawnSync("podman", ["rm", "-f", `ab-${removed.currentRunId}`], { stdio: "ignore" });
		for (const row of rows) {
			const done = await waitDone(board, row.id, 90_000);
			expect(done).toMatchObject({ state: "failed", errorCode: "killed-outside" });
			expect(done.error).toMatch(/^its container was killed from outside/);
		}
	}, 180_000);
});
