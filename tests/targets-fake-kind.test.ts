/**
 * A third kind of target added in one folder (test-support/fake-kind/: its object, registered in this
 * process and, through NODE_OPTIONS=--import, in the link's), and nothing else: `targets add`, the
 * targets table, `targets check`, `dispatch --on`, `list`, `show`, `stop` and `targets remove` work for
 * it unchanged, with the real pi as the worker at the far side (a directory here, reached by
 * host-agent.mjs as a local child). The link, the queue, the board and the subcommands never test `kind`.
 * The board is open meanwhile (its safety tick runs), as a user's is: at this far side, on this machine
 * as this user, the far runner's end sweeps every process of the run, the link too, and the tick gives
 * the run a new link that records the end.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runProcesses } from "../runner/store/proc.mjs";
import { createBoardService } from "../src/board/engine/service.ts";
import { parseSubcommand, runSubcommand } from "../src/board/subcommands/subcommands.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import "../test-support/fake-kind/register.mjs";
import { initRepo } from "../test-support/git-repo.ts";
import { createTestAgent, PI_CLI, REPO_ROOT, waitFor, type TestAgent } from "../test-support/pi-harness.ts";

const REGISTER = join(REPO_ROOT, "test-support", "fake-kind", "register.mjs");
const agents: TestAgent[] = [];
const dirs: string[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

describe("a third kind of target", () => {
	it("is added, checked, dispatched to, listed, shown, stopped and removed through the unchanged subcommands", async () => {
		const agent = createTestAgent({
			script: {
				rules: [{ match: "SLOW", steps: [{ stall: true }] }],
				fallback: [{ text: "Done on the fake target." }],
			},
		});
		agents.push(agent);
		const root = mkdtempSync(join(tmpdir(), "pab-fake-kind-"));
		dirs.push(root);
		const repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
		const far = join(root, "far");
		const board = createBoardService({
			storeDir: join(root, "store"),
			piCommand: [process.execPath, PI_CLI],
			env: { ...agent.env, NODE_OPTIONS: `--import=${REGISTER}` },
			safetyPollMs: 300,
		});
		const unwatch = board.watch(() => undefined);
		const run = async (args: string): Promise<string> => {
			const parsed = parseSubcommand(args);
			if (!parsed.ok) throw new Error(parsed.error);
			return runSubcommand(board, parsed, repo);
		};

		expect(await run(`targets add far --fake ${far} --pi "${process.execPath} ${PI_CLI}" --max 2`)).toBe(
			`added target far: a directory here (${far}), up to 2 at a time\ncheck it: /agent-board targets check far`,
		);
		expect(await run("targets check far")).toContain("far: ready");
		expect(await run("targets")).toMatch(
			new RegExp(`^far\\s+a directory here \\(${far}\\)\\s+0/2\\s+0\\s+-\\s+ok$`, "m"),
		);

		const dispatched = await run("dispatch --on far say that you are done");
		const id = /^dispatched (\S+)/.exec(dispatched)?.[1] ?? "";
		const done = await waitDone(board, id, 120_000);
		expect(done).toMatchObject({ state: "completed", target: "far", latestAssistant: "Done on the fake target." });
		// It ran at the far side: that store has the run, in the layout every target store has.
		expect(existsSync(join(far, "store", "rows", id, "runs", done.currentRunId ?? "", "events.jsonl"))).toBe(true);
		expect(await run("list")).toMatch(new RegExp(`^${id}\\s+completed\\s.*\\sfar\\s`, "m"));
		const shown = await run(`show ${id}`);
		expect(shown).toContain("target:    far");
		expect(shown).toContain("Done on the fake target.");

		const slow = /^dispatched (\S+)/.exec(await run("dispatch --on far SLOW keep working"))?.[1] ?? "";
		const working = await waitFor(
			async () => {
				const row = await board.get(slow);
				return row?.state === "working" && row.alive && row.runDir && existsSync(join(row.runDir, "link.json"))
					? row
					: undefined;
			},
			"the slow row to start at the far side",
			120_000,
		);
		await expect(run("targets remove far")).rejects.toThrow(
			`target far has 1 row(s) running or waiting there (${slow})`,
		);
		expect(await run(`stop ${slow}`)).toBe(`${slow}: stopped`);
		// Nothing of the run is left: the link, host-agent, the far runner and its pi all carried its tag.
		await waitFor(
			() => runProcesses(working.currentRunId ?? "").length === 0,
			"every process of the stopped run to exit",
			30_000,
		);
		expect(await run("targets remove far")).toBe("removed target far");
		expect(await run("targets")).not.toContain("far");
		unwatch();
	}, 300_000);
});
