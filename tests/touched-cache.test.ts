/**
 * `/agent-board list` runs git only for worktree rows that changed since their touched files were
 * computed: a repeat list, in this process or a new one, spawns no git (counted through a git wrapper
 * first on PATH); a worktree that changed is recomputed alone.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { createTestAgent, type TestAgent } from "../test-support/pi-harness.ts";
import { execFileSync } from "node:child_process";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

const WRITE = `printf 'attempt %s\\n' "$AGENT_BOARD_ROW" > shared.txt && printf 'mine\\n' > "own-$AGENT_BOARD_ROW.txt"`;

describe("touched files cache", () => {
	it("a repeat list runs no git; a changed worktree is recomputed alone", async () => {
		const agent = createTestAgent({
			script: {
				rules: [
					{
						match: "ATTEMPT",
						steps: [{ toolCall: { name: "bash", args: { command: WRITE } } }, { text: "Wrote my attempt." }],
					},
				],
				fallback: [{ text: "ok" }],
			},
		});
		agents.push(agent);
		const repo = initRepo(join(agent.root, "repo"), { "shared.txt": "base\n", "README.md": "# project\n" });
		const board = boardFor(agent);
		// Three rows of their own (not one attempt set: attempts of a set never overlap each other).
		const started = [];
		for (const n of [1, 2, 3])
			started.push(
				await board.dispatch({
					prompt: `ATTEMPT: rewrite shared.txt, take ${n}`,
					cwd: repo,
					worktreeMode: "worktree",
				}),
			);
		for (const row of started) await waitDone(board, row.id);

		// A git that logs where it ran, first on PATH for the lists below.
		const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
		const bin = join(agent.root, "bin");
		const log = join(agent.root, "git.log");
		mkdirSync(bin);
		writeFileSync(join(bin, "git"), `#!/bin/sh\necho "$PWD" >> '${log}'\nexec '${realGit}' "$@"\n`);
		chmodSync(join(bin, "git"), 0o755);
		const spawns = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);
		const savedPath = process.env.PATH;
		process.env.PATH = `${bin}:${savedPath}`;
		try {
			const first = await board.list();
			const firstSpawns = spawns().length;
			// Three worktree rows of one repo: their touched files come from git once.
			expect(firstSpawns).toBeGreaterThanOrEqual(3);
			for (const row of first) expect(row.overlaps?.map((o) => o.file)).toEqual(["shared.txt"]);

			await board.list();
			expect(spawns().length).toBe(firstSpawns);
			// A new pi process: the files persisted with their key in each row's dir.
			const again = await boardFor(agent).list();
			expect(spawns().length).toBe(firstSpawns);
			expect(again.map((row) => row.overlaps?.map((o) => o.file))).toEqual(first.map(() => ["shared.txt"]));

			// One worktree changes: only its row runs git (in its worktree, and the main checkout's HEAD).
			const changed = started[0]!;
			writeFileSync(join(changed.worktreePath!, "later.txt"), "edited by hand\n");
			await boardFor(agent).list();
			const rerun = spawns().slice(firstSpawns);
			expect(rerun.length).toBeGreaterThan(0);
			expect(rerun.filter((cwd) => cwd !== changed.worktreePath && cwd !== repo)).toEqual([]);
			expect(rerun).toContain(changed.worktreePath);
			const persisted = JSON.parse(
				readFileSync(join(board.storeDir, "rows", changed.id, "touched.json"), "utf8"),
			) as { files: string[] };
			expect(persisted.files).toContain("later.txt");
		} finally {
			process.env.PATH = savedPath;
		}
	}, 120_000);
});
