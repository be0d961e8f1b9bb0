/**
 * Fault battery, round two (issue #20), case 5: merging a row, end to end with the real runner, pi
 * and the scripted model in a temporary repository. File names whole (a leading space, spaces,
 * unicode); the repository's pre-commit hook obeyed, with its words; a conflict leaves no commit on the
 * row's branch; a merge killed after the main checkout moved is recognised by the next read and recorded
 * by the supervise step (list's own pump, or the board's tick).
 */
import { chmodSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { storePaths } from "../src/board/engine/paths.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { git, initRepo, snapshot } from "../test-support/git-repo.ts";
import { createTestAgent, runPi, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

const NAMES = [" a.txt", "b c.txt", "caf\u00e9 \u00fc.txt", "new file.txt"];
const EDIT = `printf 'row edit\\n' > ' a.txt' && printf 'row\\n' > 'b c.txt' && printf 'row\\n' > 'caf\u00e9 \u00fc.txt' && printf 'new\\n' > 'new file.txt'`;
const COMMITTED =
	"printf 'second row\\n' > other.txt && git add other.txt && git commit -q -m 'second row' && echo committed";

describe("fault battery: merge", () => {
	it("case 5: names whole in the plan, the pre-commit hook obeyed, no stray commit on a conflict, a killed merge recorded after the next read", async () => {
		const agent = createTestAgent({
			script: {
				rules: [
					{
						match: "EDIT-NAMES",
						steps: [{ toolCall: { name: "bash", args: { command: EDIT } } }, { text: "Edited." }],
					},
					{
						match: "COMMIT-OTHER",
						steps: [{ toolCall: { name: "bash", args: { command: COMMITTED } } }, { text: "Committed." }],
					},
				],
				fallback: [{ text: "ok" }],
			},
		});
		agents.push(agent);
		const repo = initRepo(join(agent.root, "repo"), {
			" a.txt": "base\n",
			"b c.txt": "base\n",
			"caf\u00e9 \u00fc.txt": "base\n",
			"other.txt": "base\n",
		});
		git(repo, "config", "core.quotePath", "true");
		const board = boardFor(agent);
		const [row, other] = [
			await board.dispatch({ prompt: "EDIT-NAMES edit the odd names", cwd: repo, worktreeMode: "worktree" }),
			await board.dispatch({ prompt: "COMMIT-OTHER commit one file", cwd: repo, worktreeMode: "worktree" }),
		];
		for (const id of [row.id, other.id]) expect((await waitDone(board, id)).state).toBe("completed");

		// The plan names every file whole, as does the headless dry run.
		const planned = await board.merge(row.id, { dryRun: true });
		expect(planned.plan.files).toEqual([...NAMES].sort());
		expect(planned.plan.uncommitted.map((line) => line.slice(3)).sort()).toEqual([...NAMES].sort());
		const dry = await runPi(agent, {
			args: ["-p", `/agent-board merge ${row.id} --dry-run`],
			cwd: repo,
			env: { AGENT_BOARD_DIR: board.storeDir },
		});
		expect(dry.code, dry.stderr).toBe(0);
		expect(dry.stdout).toContain(`files:  a.txt, b c.txt, caf\u00e9 \u00fc.txt, new file.txt`);

		// A failing pre-commit hook refuses the commit, in its own words; nothing moves anywhere.
		const hook = join(repo, ".git", "hooks", "pre-commit");
		writeFileSync(hook, "#!/bin/sh\necho 'HOOK SAYS NO: run the linter first' >&2\nexit 1\n");
		chmodSync(hook, 0o755);
		const branch = `agent-board/${row.id}`;
		const tip = git(repo, "rev-parse", branch);
		const main = snapshot(repo);
		const worktree = git(row.worktreePath!, "status", "--porcelain");
		await expect(board.merge(row.id, { commit: true })).rejects.toThrow(
			/HOOK SAYS NO: run the linter first[\s\S]*Nothing was committed or merged/,
		);
		expect(git(repo, "rev-parse", branch)).toBe(tip);
		expect(git(row.worktreePath!, "status", "--porcelain")).toBe(worktree);
		expect(snapshot(repo)).toEqual(main);
		rmSync(hook);

		// main changes " a.txt" too: the merge conflicts before anything is committed on the row's branch.
		writeFileSync(join(repo, " a.txt"), "main edit\n");
		git(repo, "commit", "-q", "-am", "main edits a.txt");
		const conflict = await board.merge(row.id, { commit: true });
		expect(conflict.status).toBe("conflict");
		if (conflict.status !== "conflict") throw new Error("expected a conflict");
		expect(conflict.files).toEqual([" a.txt"]);
		expect(conflict.committed).toBeUndefined();
		// The work stays uncommitted, so the follow-up asks for the commit that git merge needs first.
		expect(conflict.followUp).toMatch(
			new RegExp(
				`^Commit your uncommitted changes on ${branch} first\\. Bring your branch ${branch} up to date with main`,
			),
		);
		expect(git(repo, "rev-parse", branch)).toBe(tip);
		expect(git(row.worktreePath!, "status", "--porcelain")).toBe(worktree);
		git(repo, "reset", "-q", "--hard", "HEAD~1");
		const merged = await board.merge(row.id, { commit: true });
		expect(merged.status).toBe("merged");
		expect((await board.get(row.id))?.merged?.commit).toBe(git(repo, "rev-parse", "HEAD"));

		// A merge killed after the main checkout moved and before meta said so: its intent is in meta,
		// main holds the target. The next read (another pi's list) records the merge, once.
		const paths = storePaths(board.storeDir);
		const otherTip = git(repo, "rev-parse", `agent-board/${other.id}`);
		const head = git(repo, "rev-parse", "HEAD");
		const tree = git(repo, "merge-tree", "--write-tree", head, otherTip);
		const target = git(repo, "commit-tree", tree, "-p", head, "-p", otherTip, "-m", "merge the other row");
		const metaPath = paths.meta(other.id);
		const meta = JSON.parse(readFileSync(metaPath, "utf8")) as Record<string, unknown>;
		writeFileSync(metaPath, JSON.stringify({ ...meta, merging: { at: 1234, head, target, into: "main" } }));
		git(repo, "merge", "--ff-only", "-q", target);
		const listed = await runPi(agent, {
			args: ["-p", "/agent-board list"],
			cwd: repo,
			env: { AGENT_BOARD_DIR: board.storeDir },
		});
		expect(listed.code, listed.stderr).toBe(0);
		const recorded = JSON.parse(readFileSync(metaPath, "utf8")) as { merged?: unknown; merging?: unknown };
		expect(recorded.merged).toEqual({ at: 1234, commit: target, into: "main" });
		expect(recorded.merging).toBeUndefined();
		await expect(board.merge(other.id)).rejects.toThrow(`it was merged into main as ${target.slice(0, 12)}`);
		// An intent whose merge never moved the checkout is dropped, and nothing is recorded.
		const never = git(repo, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "a merge that never happened");
		writeFileSync(
			metaPath,
			JSON.stringify({ ...meta, merging: { at: 1, head: target, target: never, into: "main" } }),
		);
		expect((await board.get(other.id))?.merged).toBeUndefined();
		// The read wrote nothing; the supervise step drops the intent it found.
		expect((JSON.parse(readFileSync(metaPath, "utf8")) as { merging?: unknown }).merging).toBeDefined();
		expect(await board.supervise()).toEqual([other.id]);
		expect((JSON.parse(readFileSync(metaPath, "utf8")) as { merging?: unknown }).merging).toBeUndefined();
	}, 180_000);
});
