/**
 * pi's start-up with the package touches neither the board's engine and dashboard code nor its store:
 * a real `pi -p` traced at the fs level (test-support/fs-trace.cjs) reads only the light registration
 * modules of src/board/ and nothing under the store; the first `/agent-board list` then loads the
 * rest and reads the store (the trace sees both, so it can fail).
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, REPO_ROOT, runPi, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

/** What registering the tools and the command needs, and nothing else. */
const LIGHT = ["index.ts", "loader.ts", "tools.ts", "ui.ts", "worker-env.ts", "subcommands/usage.ts", "write-whole.ts"];

describe("lazy start-up", () => {
	it("pi -p loads only the board's registration modules and reads no store file; first use loads the rest", async () => {
		const agent = createTestAgent({ script: { rules: [], fallback: [{ text: "Done." }] } });
		agents.push(agent);
		const board = boardFor(agent);
		const row = await board.dispatch({ prompt: "a row in the store", cwd: agent.cwd });
		await waitDone(board, row.id);
		const boardSrc = `${join(REPO_ROOT, "src", "board")}/`;
		// The web server's code (src/web/) loads only when `serve` is used.
		const webSrc = `${join(REPO_ROOT, "src", "web")}/`;
		const log = join(agent.root, "fs.log");
		const env = {
			AGENT_BOARD_DIR: board.storeDir,
			NODE_OPTIONS: `--require ${join(REPO_ROOT, "test-support", "fs-trace.cjs")}`,
			FS_TRACE_LOG: log,
			FS_TRACE_MATCH: `${boardSrc}:${webSrc}:${board.storeDir}`,
		};
		const traced = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);

		const hi = await runPi(agent, { args: ["-p", "--no-session", "--", "hi"], env, timeoutMs: 120_000 });
		expect(hi.code, hi.stderr).toBe(0);
		const atStart = traced();
		const files = [
			...new Set(
				atStart
					.map((line) => line.split(" ")[1]!)
					.filter((path) => path.startsWith(boardSrc))
					.map((path) => path.slice(boardSrc.length)),
			),
		];
		// The trace works: the entry was read.
		expect(files).toContain("index.ts");
		expect(files.filter((file) => !LIGHT.includes(file))).toEqual([]);
		expect(atStart.filter((line) => line.includes(board.storeDir))).toEqual([]);
		expect(atStart.filter((line) => line.includes(webSrc))).toEqual([]);

		rmSync(log);
		const list = await runPi(agent, { args: ["-p", "/agent-board list"], env, timeoutMs: 120_000 });
		expect(list.code, list.stderr).toBe(0);
		expect(list.stdout).toContain("a row in the store");
		const used = traced();
		expect(used.some((line) => line.endsWith(`${boardSrc}runtime.ts`))).toBe(true);
		expect(used.some((line) => line.includes(join(board.storeDir, "rows", row.id)))).toBe(true);
		// The search index is opened by a search only: listing the board never touches it.
		expect(used.filter((line) => line.includes(join(board.storeDir, "search")))).toEqual([]);
		// Only serve's argument parser and its record come with the board (the settings switch that reads them
		// is the dashboard's, dashboard/web-setting.ts); the server's code stays out.
		expect(
			[
				...new Set(
					used.filter((line) => line.includes(webSrc)).map((line) => line.split(" ")[1]!.slice(webSrc.length)),
				),
			].sort(),
		).toEqual(["serve-args.ts", "web-files.ts"]);
	}, 240_000);
});
