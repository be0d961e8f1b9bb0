/**
 * Store robustness and the extension surface: damaged store files become error rows without losing
 * anything, ids cannot escape the store, the LLM tools dispatch from a real pi that then exits, and
 * worktree rows are isolated with diff stats and guarded removal.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, runPi, waitFor, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

describe("board store", () => {
	it("shows damaged rows as error with the reason, leaves their files, and rejects escaping ids", async () => {
		const agent = createTestAgent({ script: { rules: [], fallback: [{ text: "Done." }] } });
		agents.push(agent);
		const board = boardFor(agent);
		const good = await board.dispatch({ prompt: "make a good row", cwd: agent.cwd });
		await waitDone(board, good.id);
		const rows = join(board.storeDir, "rows");
		const meta = readFileSync(join(rows, good.id, "meta.json"), "utf8");
		const clone = (id: string): string => {
			cpSync(join(rows, good.id), join(rows, id), { recursive: true });
			writeFileSync(join(rows, id, "meta.json"), meta.replace(`"id":"${good.id}"`, `"id":"${id}"`));
			return join(rows, id);
		};
		const statusOf = (dir: string) => join(dir, "runs", good.currentRunId!, "status.json");
		const damage: Record<string, { file: (dir: string) => string; content: string | undefined; reason: RegExp }> = {
			"bad-meta-json": {
				file: (d) => join(d, "meta.json"),
				content: "{not json",
				reason: /meta\.json: invalid JSON/,
			},
			"bad-meta-trunc": {
				file: (d) => join(d, "meta.json"),
				content: meta.slice(0, 40),
				reason: /meta\.json: invalid JSON/,
			},
			"bad-meta-bom": {
				file: (d) => join(d, "meta.json"),
				content: `\ufeff${meta.replace(good.id, "bad-meta-bom")}`,
				reason: /meta\.json: starts with a byte order mark/,
			},
			"bad-meta-gone": { file: (d) => join(d, "meta.json"), content: undefined, reason: /meta\.json: missing/ },
			"bad-meta-empty": { file: (d) => join(d, "meta.json"), content: "", reason: /meta\.json: empty file/ },
			"bad-status-trunc": { file: statusOf, content: '{"state":"work', reason: /status\.json: invalid JSON/ },
			"bad-status-bom": {
				file: statusOf,
				content: `\ufeff${readFileSync(statusOf(join(rows, good.id)), "utf8")}`,
				reason: /status\.json: starts with a byte order mark/,
			},
			"bad-status-gone": { file: statusOf, content: undefined, reason: /status\.json: missing/ },
		};
		const before = new Map<string, string | undefined>();
		for (const [id, spec] of Object.entries(damage)) {
			const path = spec.file(clone(id));
			if (spec.content === undefined) rmSync(path);
			else writeFileSync(path, spec.content);
			before.set(id, spec.content);
		}
		mkdirSync(join(rows, "..evil"), { recursive: true });

		const listed = await board.list();
		const byId = new Map(listed.map((row) => [row.id, row]));
		expect(byId.get(good.id)?.state).toBe("completed");
		expect(byId.has("..evil")).toBe(false);
		for (const [id, spec] of Object.entries(damage)) {
			const row = byId.get(id);
			expect(row?.state, id).toBe("error");
			expect(row?.error, id).toMatch(spec.reason);
			const path = spec.file(join(rows, id));
			if (spec.content === undefined) expect(existsSync(path), id).toBe(false);
			else expect(readFileSync(path, "utf8"), id).toBe(before.get(id));
		}
		for (const bad of ["..", "../x", "/etc/passwd", "a/b", "", "x/../../y"]) {
			await expect(board.get(bad), bad).rejects.toThrow(/invalid row id/);
			await expect(board.stop(bad), bad).rejects.toThrow(/invalid row id/);
			await expect(board.reply(bad, "hi"), bad).rejects.toThrow(/invalid row id/);
		}
		expect(await board.get("no-such-row")).toBeUndefined();
		await expect(board.dispatch({ prompt: "a\0b", cwd: agent.cwd })).rejects.toThrow(/NUL byte/);
		await expect(board.dispatch({ prompt: "y".repeat(1100 * 1024), cwd: agent.cwd })).rejects.toThrow(
			/limit is 1048576/,
		);
		await expect(board.dispatch({ prompt: "ok", cwd: join(rows, good.id, "meta.json") })).rejects.toThrow(
			/not a directory/,
		);
		// No node for the runner: the row fails at once with the reason instead of hanging queued.
		const { createBoardService } = await import("../src/board/engine/service.ts");
		const noNode = createBoardService({
			storeDir: board.storeDir,
			piCommand: ["pi"],
			env: { ...agent.env, AGENT_BOARD_NODE: join(agent.root, "no-node") },
		});
		const orphan = await noNode.dispatch({ prompt: "never starts", cwd: agent.cwd });
		const failed = await waitDone(noNode, orphan.id, 10_000);
		expect(failed.state).toBe("failed");
		expect(failed.error).toMatch(/could not start the runner .*no-node/);
		await board.archive(orphan.id);
		const v1 = await board.version();
		expect(await board.version()).toBe(v1);
		await board.rename(good.id, "renamed");
		await board.pin(good.id, true);
		await board.archive(good.id);
		expect(await board.version()).not.toBe(v1);
		expect((await board.list()).some((row) => row.id === good.id)).toBe(false);
		expect((await board.list({ includeArchived: true })).find((row) => row.id === good.id)).toMatchObject({
			name: "renamed",
			pinned: true,
			archived: true,
		});
		await board.unarchive(good.id);
		expect((await board.get(good.id))?.archived).toBe(false);
	}, 120_000);

	it("dispatches through board_dispatch from a real pi that exits mid-run; the run completes; board_status reports it", async () => {
		const agent = createTestAgent();
		agents.push(agent);
		const gate = join(agent.root, "gate");
		const store = join(agent.root, "board");
		agent.writeScript({
			rules: [
				{
					match: "fan out",
					steps: [
						{
							toolCall: { name: "board_dispatch", args: { prompt: "WORKER: wait for the gate", name: "gated" } },
						},
						{ text: "Dispatched." },
					],
				},
				{ match: "WORKER", steps: [{ waitForFile: gate, then: { text: "Gate opened, work finished." } }] },
				{ match: "status", steps: [{ toolCall: { name: "board_status", args: {} } }, { text: "Reported." }] },
			],
		});
		const env = { AGENT_BOARD_DIR: store };
		const main = await runPi(agent, { args: ["--mode", "json", "-p", "--no-session", "--", "fan out"], env });
		expect(main.code).toBe(0);
		const { createBoardService } = await import("../src/board/engine/service.ts");
		const view = createBoardService({ storeDir: store, env: agent.env });
		const [row] = await view.list();
		expect(row).toMatchObject({ name: "gated", cwd: agent.cwd });
		await waitFor(async () => (await view.get(row!.id))?.state === "working", "worker to start", 30_000);
		expect((await view.get(row!.id))?.alive).toBe(true);
		writeFileSync(gate, "open");
		const done = await waitDone(view, row!.id);
		expect(done).toMatchObject({ state: "completed", summary: "Gate opened, work finished." });
		const status = await runPi(agent, { args: ["--mode", "json", "-p", "--no-session", "--", "status"], env });
		const toolEnd = status.events.find((e) => e.type === "tool_execution_end" && e.toolName === "board_status");
		const text = JSON.stringify(toolEnd?.result);
		expect(text).toContain(row!.id);
		expect(text).toContain("[completed] gated");
	}, 120_000);

	it("isolates worktree rows on agent-board/<id>, reports diff stats, guards removal; auto isolates a second writer", async () => {
		const agent = createTestAgent();
		agents.push(agent);
		const repo = join(agent.cwd, "repo");
		mkdirSync(repo);
		const git = (...args: string[]) =>
			execFileSync("git", args, { cwd: repo, env: agent.env, encoding: "utf8" }).trim();
		git("init", "-q", "-b", "main");
		writeFileSync(join(repo, "README"), "hello\n");
		git("add", "README");
		git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init");
		agent.writeScript({
			rules: [
				{
					match: "WRITE",
					steps: [
						{ toolCall: { name: "write", args: { path: "notes.txt", content: "one\ntwo\nthree\n" } } },
						{ text: "Wrote notes." },
					],
				},
				{ match: "HOLD", steps: [{ stall: true }] },
			],
		});
		const board = boardFor(agent);
		const row = await board.dispatch({ prompt: "WRITE notes", cwd: repo, worktreeMode: "worktree" });
		expect(row.branch).toBe(`agent-board/${row.id}`);
		expect(row.worktreePath).toBe(join(board.storeDir, "worktrees", row.id));
		const done = await waitDone(board, row.id);
		expect(done.state).toBe("completed");
		expect(existsSync(join(row.worktreePath!, "notes.txt"))).toBe(true);
		expect(existsSync(join(repo, "notes.txt"))).toBe(false);
		// Diff stats run git: on demand (board.diff), never inside list/get.
		expect(done.diff).toBeUndefined();
		expect(await board.diff(row.id)).toEqual({ added: 3, removed: 0, files: 1 });
		execFileSync("git", ["add", "notes.txt"], { cwd: row.worktreePath, env: agent.env });
		expect(await board.diff(row.id)).toEqual({ added: 3, removed: 0, files: 1 });
		await expect(board.removeWorktree(row.id)).rejects.toThrow(/uncommitted changes/);
		expect(existsSync(row.worktreePath!)).toBe(true);
		await board.removeWorktree(row.id, { force: true });
		expect(existsSync(row.worktreePath!)).toBe(false);
		expect((await board.get(row.id))?.worktreePath).toBeUndefined();

		const first = await board.dispatch({ prompt: "HOLD one", cwd: repo, worktreeMode: "auto" });
		const second = await board.dispatch({ prompt: "HOLD two", cwd: repo, worktreeMode: "auto" });
		expect(first.worktreePath).toBeUndefined();
		expect(second.worktreePath).toBe(join(board.storeDir, "worktrees", second.id));
		await expect(board.dispatch({ prompt: "x", cwd: agent.cwd, worktreeMode: "worktree" })).rejects.toThrow(
			/needs a git repository/,
		);
		await Promise.all([board.stop(first.id), board.stop(second.id)]);
	}, 120_000);
});
