/**
 * A budget on a container target on a remote engine (`--engine-host`: podman's API service run rootless
 * as a second Unix user behind its own sshd, test-support/remote-engine.ts), end to end: the far runner
 * in the engine's station holds each turn's end and the link on this machine decides it, so a row's token
 * budget pauses the row at the end of the turn that crossed it (the budget's question, no request after
 * it, every turn's spend in this machine's ledger), and raising it lets the same run go on in place.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dayOf, spendDir } from "../runner/life/spend-ledger.mjs";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import { rowWhere, waitDone } from "../test-support/board-helpers.ts";
import type { FauxStep } from "../test-support/faux-script.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { startModelServer, writeAgentDir, type ModelServer } from "../test-support/model-server.ts";
import { PI_CLI } from "../test-support/pi-harness.ts";
import { remoteEngineMissing, startRemotePodman, type RemoteEngine } from "../test-support/remote-engine.ts";
import { podmanMissing, requires, sshdMissing } from "../test-support/requires.ts";

const missing = sshdMissing() ?? podmanMissing() ?? remoteEngineMissing();
let engine: RemoteEngine;
let model: ModelServer;
let root: string;
let store: string;
let repo: string;
let board: BoardEngine;
const agentDirBefore = process.env.PI_CODING_AGENT_DIR;

beforeAll(async () => {
	if (missing) return;
	engine = await startRemotePodman();
	model = await startModelServer();
	root = mkdtempSync(join(tmpdir(), "pab-budget-engine-"));
	store = join(root, "store");
	// The user's pi home: each run gets its provider's part of it, in the station.
	process.env.PI_CODING_AGENT_DIR = writeAgentDir(model, join(root, "agent"));
	repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
	board = createBoardService({ storeDir: store, piCommand: [process.execPath, PI_CLI], env: { ...process.env } });
	await board.targets.add("far", {
		kind: "container",
		engine: "podman",
		image: engine.image,
		engineHost: engine.url,
		engineIdentity: engine.identity,
		network: "host",
	});
	const check = await board.targets.check("far");
	if (!check.ok) throw new Error(`targets check far: ${JSON.stringify(check.items.filter((item) => !item.ok))}`);
}, 600_000);

afterAll(async () => {
	if (missing) return;
	process.env.PI_CODING_AGENT_DIR = agentDirBefore;
	await engine?.cleanup();
	await model?.close();
	if (root) rmSync(root, { recursive: true, force: true });
});

const STEPS: FauxStep[] = [
	...Array.from(
		{ length: 6 },
		(_, i): FauxStep => ({
			text: `ENGINEBUDGET step ${i + 1}.`,
			toolCall: { name: "bash", args: { command: `echo ${i}` } },
		}),
	),
	{ text: "All steps done." },
];

/** This run's spend in the local ledger, one line per turn (target, tokens), in order. */
const turns = (runId: string) =>
	readFileSync(join(spendDir(store), `${dayOf(Date.now())}.jsonl`), "utf8")
		.split("\n")
		.filter(Boolean)
		.map((line) => JSON.parse(line) as { run: string; target?: string; tokens: number })
		.filter((line) => line.run === runId)
		.map((line) => `${line.target}:${line.tokens}`);

describe("budgets on a remote engine's container target", () => {
	it("a row's token budget pauses the row at a turn's end; its raise lets the same run go on in place", async (ctx) => {
		requires(ctx, "sshd, podman and uidmap", missing);
		model.setScript({ rules: [{ match: "ENGINEBUDGET", steps: STEPS }] });
		const dispatched = await board.dispatch({
			prompt: "ENGINEBUDGET walk the files",
			cwd: repo,
			target: "far",
			budget: { tokens: 40 },
		});
		const paused = await rowWhere(
			board,
			dispatched.id,
			"the remote engine's row to pause on its budget",
			(row) => row.state === "needs_input" && row.budget?.paused === true,
			240_000,
		);
		expect(paused).toMatchObject({
			alive: true,
			question: "budget reached: 40 tokens; raise or stop",
			currentRunId: dispatched.currentRunId,
		});
		expect(paused.budget).toMatchObject({ scope: "row", unit: "tokens", limit: 40, spent: 45 });
		const requests = () => model.requests().filter((request) => request.prompt.includes("ENGINEBUDGET"));
		expect(turns(dispatched.currentRunId ?? "")).toEqual(["far:15", "far:15", "far:15"]);
		expect(requests()).toHaveLength(3);
		// Resumed: the run's owner saw the pause end in place (a parked run would be continued by a new run).
		const raised = await board.budget?.(paused.id, { tokens: 1_000_000 });
		expect(raised).toMatchObject({ scope: "row", outcome: "resumed" });
		const done = await waitDone(board, paused.id, 180_000);
		expect(done).toMatchObject({
			state: "completed",
			latestAssistant: "All steps done.",
			currentRunId: dispatched.currentRunId,
		});
		expect(requests()).toHaveLength(STEPS.length);
	}, 600_000);
});
