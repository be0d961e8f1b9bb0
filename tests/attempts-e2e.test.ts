/**
 * Attempt sets end to end: the real runner and pi binary with the scripted model, in a temporary
 * git repository. Workers write through pi's bash tool, so every change is a real agent edit.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_FORK_PROMPT } from "../src/board/engine/dispatch.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { git, initRepo, snapshot } from "../test-support/git-repo.ts";
import { createTestAgent, runPi, userTexts, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

// Each attempt writes its own row id into the shared file, so the attempts really differ.
const WRITE = `printf 'attempt %s\\n' "$AGENT_BOARD_ROW" > shared.txt && printf 'mine\\n' > "own-$AGENT_BOARD_ROW.txt"`;
// As the follow-up asks: the work is committed first (a conflict leaves it uncommitted), then main is merged in.
const RESOLVE = `git add -A && git commit -q -m "my attempt" >/dev/null 2>&1; git merge main -q -m "merge main" >/dev/null 2>&1; printf 'resolved\\n' > shared.txt && git add -A && git commit -q -m "resolve conflicts with main" && echo resolved`;

function setup(): { agent: TestAgent; repo: string; store: string } {
	const agent = createTestAgent({
		script: {
			rules: [
				{
					match: "ATTEMPT",
					steps: [{ toolCall: { name: "bash", args: { command: WRITE } } }, { text: "Wrote my attempt." }],
				},
				{
					match: "Bring your branch",
					steps: [
						{ toolCall: { name: "bash", args: { command: RESOLVE } } },
						{ text: "Merged main and resolved." },
					],
				},
				{ match: "FORK-SOURCE", steps: [{ text: "Noted: the secret word is pineapple." }] },
				{ match: "Continue from where", steps: [{ text: "Continuing the forked conversation." }] },
			],
			fallback: [{ text: "ok" }],
		},
	});
	agents.push(agent);
	const repo = initRepo(join(agent.root, "repo"), { "shared.txt": "base\n", "README.md": "# project\n" });
	return { agent, repo, store: join(agent.root, "store") };
}

describe("attempt sets", () => {
	it("runs three attempts in three worktrees, flags the overlap with a rival outside the set, merges one, refuses a conflict and a dirty checkout, and keeps merged state across a restart", async () => {
		const { agent, repo, store } = setup();
		const board = boardFor(agent);
		const headless = (command: string) =>
			runPi(agent, {
				args: ["-p", `/agent-board ${command}`],
				cwd: repo,
				env: { AGENT_BOARD_DIR: store },
				timeoutMs: 180_000,
			});

		const started = await board.dispatchAttempts({ prompt: "ATTEMPT: rewrite shared.txt", cwd: repo, count: 3 });
		// A rival outside the set: attempts of one set are alternatives, only rows of different sets overlap.
		const rival = await board.dispatch({
			prompt: "ATTEMPT: rewrite shared.txt my own way",
			cwd: repo,
			worktreeMode: "worktree",
		});
		const r4 = rival.id;
		expect(started).toHaveLength(3);
		const ids = started.map((row) => row.id);
		const [r1, r2, r3] = ids as [string, string, string];
		expect(new Set(started.map((row) => row.worktreePath)).size).toBe(3);
		expect(new Set(started.map((row) => row.attempt?.setId)).size).toBe(1);
		expect(started.map((row) => row.attempt?.index)).toEqual([1, 2, 3]);
		for (const id of [...ids, r4]) expect((await waitDone(board, id, 180_000)).state).toBe("completed");

		// Three worktrees, each holding its own attempt; the main checkout is untouched.
		for (const row of started) {
			expect(readFileSync(join(row.worktreePath ?? "", "shared.txt"), "utf8")).toBe(`attempt ${row.id}\n`);
			expect(row.branch).toBe(`agent-board/${row.id}`);
		}
		expect(readFileSync(join(repo, "shared.txt"), "utf8")).toBe("base\n");

		// Overlap: shared.txt is flagged with the rival only, not between attempts of the set; each row's own file is not.
		const listed = await board.list();
		for (const id of ids) {
			const row = listed.find((r) => r.id === id);
			expect(row?.overlaps).toEqual([{ file: "shared.txt", rows: [r4] }]);
		}
		expect(listed.find((r) => r.id === r4)?.overlaps).toEqual([{ file: "shared.txt", rows: ids }]);
		const set = await board.compare(r2);
		expect(set.rows.map((entry) => entry.row.id)).toEqual(ids);
		expect(set.rows[1]?.files).toEqual([`own-${r2}.txt`, "shared.txt"]);
		const diff = (await board.compareDiff(r1, r2)).join("\n");
		expect(diff).toContain(`-attempt ${r1}`);
		expect(diff).toContain(`+attempt ${r2}`);
		const shown = await headless(`show ${r1}`);
		expect(shown.code).toBe(0);
		expect(shown.stdout).toContain(`overlaps:  shared.txt (with ${r4})`);
		expect(shown.stdout).toContain(`attempt:   1/3 of ${started[0]?.attempt?.setId}`);

		// Uncommitted worktree changes are committed only when asked: without --commit nothing moves.
		const r1Tip = git(repo, "rev-parse", `agent-board/${r1}`);
		const before = snapshot(repo);
		const unconfirmed = await headless(`merge ${r1}`);
		expect(unconfirmed.code).toBe(1);
		expect(unconfirmed.stderr).toContain("uncommitted changes in its worktree");
		expect(unconfirmed.stderr).toContain("--commit");
		expect(git(repo, "rev-parse", `agent-board/${r1}`)).toBe(r1Tip);
		expect(snapshot(repo)).toEqual(before);

		// A dirty main checkout is refused, and the user's edit survives byte for byte.
		writeFileSync(join(repo, "README.md"), "# my unsaved edit\n");
		const dirty = snapshot(repo);
		const refused = await headless(`merge ${r1} --commit`);
		expect(refused.code).toBe(1);
		expect(refused.stderr).toMatch(/main checkout .* has uncommitted changes \( ?M README\.md\)/);
		expect(snapshot(repo)).toEqual(dirty);
		expect(git(repo, "rev-parse", `agent-board/${r1}`)).toBe(r1Tip);
		git(repo, "checkout", "--", "README.md");

		// Merge one: the main checkout now holds exactly that attempt's files.
		const merged = await headless(`merge ${r1} --commit`);
		expect(merged.code, merged.stderr).toBe(0);
		expect(merged.stdout).toContain(`merged row ${r1} into main`);
		expect(readFileSync(join(repo, "shared.txt"), "utf8")).toBe(`attempt ${r1}\n`);
		expect(readFileSync(join(repo, `own-${r1}.txt`), "utf8")).toBe("mine\n");
		expect(git(repo, "diff", "HEAD", `agent-board/${r1}`)).toBe("");
		expect(git(repo, "status", "--porcelain")).toBe("");
		expect(git(repo, "log", "-1", "--format=%s", `agent-board/${r1}`)).toContain(r1);
		const mergedHead = git(repo, "rev-parse", "HEAD");
		expect(mergedHead).not.toBe(before.head);

		// The merged row leaves the overlap; the unmerged ones still share shared.txt with the rival.
		const after = await board.list();
		expect(after.find((r) => r.id === r1)?.overlaps).toBeUndefined();
		expect(after.find((r) => r.id === r2)?.overlaps).toEqual([{ file: "shared.txt", rows: [r4] }]);
		expect(after.find((r) => r.id === r4)?.overlaps).toEqual([{ file: "shared.txt", rows: [r2, r3] }]);

		// A conflicting second attempt names the file and leaves the main checkout as it was.
		const clean = snapshot(repo);
		const conflict = await headless(`merge ${r2} --commit`);
		expect(conflict.code).toBe(1);
		expect(conflict.stderr).toContain(`merge of row ${r2} into main conflicts in: shared.txt`);
		expect(conflict.stderr).toContain(
			`/agent-board reply ${r2} Commit your uncommitted changes on agent-board/${r2} first. Bring your branch`,
		);
		expect(snapshot(repo)).toEqual(clean);
		expect(snapshot(repo).mergeInProgress).toBe(false);

		// Restart: a new service reads the merged state from the store.
		const restarted = boardFor(agent);
		const r1Row = await restarted.get(r1);
		expect(r1Row?.merged).toMatchObject({ commit: mergedHead, into: "main" });
		expect((await headless(`show ${r1}`)).stdout).toContain(`merged:    into main as ${mergedHead.slice(0, 12)}`);

		// The follow-up brings the branch up to date; the second merge then goes through.
		const result = await restarted.merge(r2, { dryRun: true });
		if (result.status !== "planned") throw new Error("dry run did not plan");
		const conflictAgain = await restarted.merge(r2, { commit: true });
		if (conflictAgain.status !== "conflict") throw new Error(`expected a conflict, got ${conflictAgain.status}`);
		await restarted.reply(r2, conflictAgain.followUp);
		expect((await waitDone(restarted, r2, 180_000)).state).toBe("completed");
		const second = await restarted.merge(r2, {});
		expect(second.status).toBe("merged");
		expect(readFileSync(join(repo, "shared.txt"), "utf8")).toBe("resolved\n");
		expect(existsSync(join(repo, `own-${r1}.txt`)) && existsSync(join(repo, `own-${r2}.txt`))).toBe(true);
		expect((await restarted.list()).find((r) => r.id === r4)?.overlaps).toEqual([{ file: "shared.txt", rows: [r3] }]);

		// A merged row's worktree is clean and can go; the row stays merged.
		await restarted.removeWorktree(r1);
		const gone = await restarted.get(r1);
		expect(gone?.worktreePath).toBeUndefined();
		expect(gone?.merged?.commit).toBe(mergedHead);
	}, 600_000);

	it("forks a row into fresh worktrees that continue its conversation", async () => {
		const { agent, repo } = setup();
		const board = boardFor(agent);
		const source = await board.dispatch({ prompt: "FORK-SOURCE: remember the secret word", cwd: repo });
		expect((await waitDone(board, source.id, 180_000)).state).toBe("completed");
		const sourceBytes = readFileSync(source.sessionFile);

		const forks = await board.fork(source.id, { count: 2 });
		expect(forks).toHaveLength(2);
		for (const row of forks) {
			expect(row.attempt).toMatchObject({ forkOf: source.id, count: 2 });
			expect(row.sessionFile).not.toBe(source.sessionFile);
			expect((await waitDone(board, row.id, 180_000)).state).toBe("completed");
			// Made by the fork's runner as it started.
			expect(row.worktreePath && existsSync(row.worktreePath)).toBe(true);
			const header = JSON.parse(readFileSync(row.sessionFile, "utf8").split("\n")[0] ?? "{}") as {
				parentSession?: string;
				cwd?: string;
			};
			expect(header.parentSession).toBe(source.sessionFile);
		}
		expect(new Set(forks.map((row) => row.worktreePath)).size).toBe(2);
		// The source conversation is untouched.
		expect(readFileSync(source.sessionFile).equals(sourceBytes)).toBe(true);

		// The model, asked to continue, sees the earlier user message and its own earlier answer.
		const forkCalls = agent.calls().filter((call) => userTexts(call).at(-1) === DEFAULT_FORK_PROMPT);
		expect(forkCalls).toHaveLength(2);
		for (const call of forkCalls) {
			expect(userTexts(call)).toContain("FORK-SOURCE: remember the secret word");
			const earlier = call.messages.filter((m) => m.role === "assistant").map((m) => JSON.stringify(m.content));
			expect(earlier.join("\n")).toContain("the secret word is pineapple");
		}
	}, 600_000);

	it("lets the main agent run best-of-N with its tools and compare the attempts", async () => {
		const { agent, repo, store } = setup();
		const script = (compareId: string) => ({
			rules: [
				{
					match: "ATTEMPT",
					steps: [{ toolCall: { name: "bash", args: { command: WRITE } } }, { text: "Wrote my attempt." }],
				},
				{
					match: "BEST-OF",
					steps: [
						{
							toolCall: {
								name: "board_dispatch",
								args: { prompt: "ATTEMPT: rewrite shared.txt", count: 2, cwd: repo },
							},
						},
						{ text: "Started two attempts." },
					],
				},
				{
					match: "COMPARE",
					steps: [
						{ toolCall: { name: "board_compare", args: { id: compareId } } },
						{ text: "I recommend attempt 1." },
					],
				},
			],
			fallback: [{ text: "ok" }],
		});
		agent.writeScript(script("none"));
		const env = { AGENT_BOARD_DIR: store };
		const dispatched = await runPi(agent, {
			args: ["--mode", "json", "-p", "BEST-OF: try it two ways"],
			cwd: repo,
			env,
			timeoutMs: 180_000,
		});
		expect(dispatched.code, dispatched.stderr).toBe(0);
		const board = boardFor(agent);
		const rows = await board.list();
		expect(rows).toHaveLength(2);
		for (const row of rows) expect((await waitDone(board, row.id, 180_000)).state).toBe("completed");

		agent.writeScript(script(rows[0]?.id ?? ""));
		const compared = await runPi(agent, {
			args: ["--mode", "json", "-p", "COMPARE the attempts"],
			cwd: repo,
			env,
			timeoutMs: 180_000,
		});
		expect(compared.code, compared.stderr).toBe(0);
		const result = compared.events.find(
			(event) => event.type === "tool_execution_end" && event.toolName === "board_compare",
		);
		const text = JSON.stringify(result?.result);
		expect(text).toContain(`attempt set ${rows[0]?.attempt?.setId}`);
		for (const row of rows) expect(text).toContain(`own-${row.id}.txt`);
		// Two attempts of one set are alternatives: neither is flagged as overlapping the other.
		expect(text).not.toContain("!overlap");
		// The agent recommends; nothing was merged.
		expect(readFileSync(join(repo, "shared.txt"), "utf8")).toBe("base\n");
	}, 600_000);
});
