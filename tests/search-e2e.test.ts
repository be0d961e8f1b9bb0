/**
 * Search over real rows: real pi workers (the scripted model) write the sessions, and `/agent-board search`
 * in a real pi finds a word only one tool's output holds, an archived row, a row that just finished, and
 * finds them again after the index is deleted or corrupted. node:sqlite's warning never reaches stderr. While
 * the store's keeper lives it keeps the index: a row that finishes is in it before anyone searches.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { parseQuery } from "../runner/search/query-parse.mjs";
import { readKept } from "../runner/search/search-duty.mjs";
import { indexPaths } from "../runner/search/search-index.mjs";
import { openReader, queryIndex } from "../runner/search/search-query.mjs";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, runPi, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

describe("search over real rows", { timeout: 300_000 }, () => {
	it("finds a tool's output, an archived row, a row just finished; rebuilds a deleted and a corrupt index", async () => {
		const agent = createTestAgent({
			script: {
				rules: [
					{
						match: "ECHO",
						// The word is made by the shell: the call's arguments do not hold it, only its output does.
						steps: [
							{ toolCall: { name: "bash", args: { command: "printf 'walrus%stusk\\n' 42" } } },
							{ text: "Printed it." },
						],
					},
					{ match: "FRESH", steps: [{ text: "The capybara sunrise report is ready." }] },
				],
				fallback: [{ text: "Nothing to see." }],
			},
		});
		agents.push(agent);
		const board = boardFor(agent);
		const env = { AGENT_BOARD_DIR: board.storeDir };
		const search = async (words: string) => {
			const run = await runPi(agent, { args: ["-p", `/agent-board search ${words}`], env, timeoutMs: 90_000 });
			expect(run.stderr).not.toMatch(/ExperimentalWarning|SQLite/);
			expect(run.code, run.stderr).toBe(0);
			return run.stdout;
		};

		const echo = await board.dispatch({ prompt: "ECHO the word", cwd: agent.cwd });
		const quiet = await board.dispatch({ prompt: "a quiet row", cwd: agent.cwd });
		await waitDone(board, echo.id, 90_000);
		await waitDone(board, quiet.id, 90_000);

		const found = await search("walrus42tusk");
		expect(found).toContain(`${echo.id}  ECHO the word`);
		expect(found).toContain("matched in tool output");
		expect(found).toMatch(/^ {4}.*walrus42tusk/m);
		expect(found).not.toContain(quiet.id);
		// Filters: the state matches, another preset does not.
		expect(await search("walrus42tusk s:completed")).toContain(echo.id);
		expect(await search("walrus42tusk preset:nosuch")).toContain("no rows match");

		await board.archive(echo.id);
		const archived = await search("walrus42tusk");
		expect(archived).toContain(echo.id);
		expect(archived).toMatch(/completed, archived/);

		const fresh = await board.dispatch({ prompt: "FRESH one", cwd: agent.cwd });
		await waitDone(board, fresh.id, 90_000);
		const justFinished = await search("capybara");
		expect(justFinished).toContain(fresh.id);
		expect(justFinished).toContain("matched in text");

		const { file, corrupt } = indexPaths(board.storeDir);
		rmSync(file);
		expect(await search("walrus42tusk")).toContain(echo.id);
		expect(existsSync(file)).toBe(true);

		writeFileSync(file, "not an index ".repeat(1000));
		expect(await search("capybara")).toContain(fresh.id);
		expect(readFileSync(corrupt, "utf8")).toContain("not an index");
	});

	it("the keeper indexes a row as it finishes: found with no search in between, then by a search", async () => {
		const agent = createTestAgent({
			script: {
				rules: [{ match: "LATER", steps: [{ text: "The ocelot harbour report is ready." }] }],
				fallback: [{ text: "Nothing to see." }],
			},
		});
		agents.push(agent);
		const board = boardFor(agent);
		const env = { AGENT_BOARD_DIR: board.storeDir };
		const first = await board.dispatch({ prompt: "a first row", cwd: agent.cwd });
		await waitDone(board, first.id, 90_000);
		// A search makes the index: the keeper keeps one that is there, and never builds one.
		const built = await runPi(agent, { args: ["-p", "/agent-board search nomatchword"], env, timeoutMs: 90_000 });
		expect(built.code, built.stderr).toBe(0);
		expect(existsSync(indexPaths(board.storeDir).file)).toBe(true);

		// The dispatch starts the keeper (a run is open); nothing searches until the row is in the index.
		const dispatchedAt = Date.now();
		const later = await board.dispatch({ prompt: "LATER one", cwd: agent.cwd });
		await waitDone(board, later.id, 90_000);
		const inIndex = async () => {
			const db = await openReader(board.storeDir);
			if (!db) return [];
			try {
				return queryIndex(db, parseQuery("ocelot"), { limit: 5 }).map((hit) => hit.rowId);
			} finally {
				db.close();
			}
		};
		const deadline = Date.now() + 60_000;
		let ids = await inIndex();
		while (!ids.includes(later.id) && Date.now() < deadline) {
			await new Promise((resolve) => setTimeout(resolve, 100));
			ids = await inIndex();
		}
		expect(ids).toContain(later.id);
		// The keeper wrote it: its record names a keeper's pass begun after the row was dispatched.
		const kept = readKept(board.storeDir);
		expect(kept?.at).toBeGreaterThanOrEqual(dispatchedAt);
		const log = readFileSync(`${board.storeDir}/keeper.log`, "utf8");
		expect(log).toContain(`keeper ${kept?.pid}: started`);

		const run = await runPi(agent, { args: ["-p", "/agent-board search ocelot"], env, timeoutMs: 90_000 });
		expect(run.code, run.stderr).toBe(0);
		expect(run.stdout).toContain(later.id);
		expect(run.stdout).toContain("matched in text");
	});
});
