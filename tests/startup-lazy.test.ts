/**
 * pi's start-up with the package touches neither the board's engine and dashboard code nor its store:
 * a real `pi -p` traced at the fs level (test-support/fs-trace.cjs) reads only the light registration
 * modules of src/board/ and nothing under the store; the first `/agent-board list` then loads the
 * rest and reads the store (the trace sees both, so it can fail). The same holds for prebuilt/start.ts,
 * what pi loads from the installed package: at start it reads no source of src/board/ at all, and
 * the first use loads the engine from the sources, relative to the bundle.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, REPO_ROOT, runPi, type TestAgent } from "../test-support/pi-harness.ts";

const PREBUILT = join(REPO_ROOT, "prebuilt", "start.ts");

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
		// The search index is opened by a search only: listing the board at most asks whether it exists (the
		// keeper's search duty, run from whoever starts a keeper).
		const search = used.filter((line) => line.includes(join(board.storeDir, "search")));
		expect(search.filter((line) => !/^l?stat(Sync)? /.test(line))).toEqual([]);
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

	it("pi -p with the package reads its prebuilt start module and no board source; first use loads the engine from src/", async () => {
		const agent = createTestAgent({ script: { rules: [], fallback: [{ text: "Done." }] } });
		agents.push(agent);
		const board = boardFor(agent);
		const row = await board.dispatch({ prompt: "a row in the store", cwd: agent.cwd });
		await waitDone(board, row.id);
		const boardSrc = `${join(REPO_ROOT, "src", "board")}/`;
		// ponytail finds its rules from its own module's place, which the bundle keeps.
		const rules = join(REPO_ROOT, "skills", "ponytail", "SKILL.md");
		const log = join(agent.root, "fs.log");
		const env = {
			AGENT_BOARD_DIR: board.storeDir,
			NODE_OPTIONS: `--require ${join(REPO_ROOT, "test-support", "fs-trace.cjs")}`,
			FS_TRACE_LOG: log,
			FS_TRACE_MATCH: `${boardSrc}:${join(REPO_ROOT, "src", "index.ts")}:${PREBUILT}:${rules}:${board.storeDir}`,
		};
		const traced = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);
		// The checkout as a package (its manifest), as `pi install <path>` loads it.
		const run = (args: string[]) =>
			runPi(agent, { args: ["-e", REPO_ROOT, ...args], env, withExtension: false, timeoutMs: 120_000 });

		const hi = await run(["-p", "--no-session", "--", "hi"]);
		expect(hi.code, hi.stderr).toBe(0);
		const atStart = traced();
		expect(atStart.some((line) => line.endsWith(PREBUILT))).toBe(true);
		expect(atStart.filter((line) => line.endsWith(join(REPO_ROOT, "src", "index.ts")))).toEqual([]);
		expect(atStart.some((line) => line.endsWith(rules))).toBe(true);
		expect(atStart.filter((line) => line.includes(boardSrc) || line.includes(board.storeDir))).toEqual([]);

		rmSync(log);
		const list = await run(["-p", "/agent-board list"]);
		expect(list.code, list.stderr).toBe(0);
		expect(list.stdout).toContain("a row in the store");
		expect(traced().some((line) => line.endsWith(`${boardSrc}runtime.ts`))).toBe(true);
	}, 240_000);
});
