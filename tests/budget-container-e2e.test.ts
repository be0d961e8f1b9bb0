/**
 * A budget on a container target, end to end with real podman and the offline worker image: the far
 * runner in the container holds each turn's end and the link on this machine decides it, so a row's
 * token budget pauses the row at the end of the turn that crossed it (the budget's question, no request
 * after it, every turn's spend in this machine's ledger), and raising it lets the same worker in the same
 * container finish.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { check } from "../runner/kinds/container/container-transport.mjs";
import { dayOf, spendDir } from "../runner/life/spend-ledger.mjs";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { rowWhere, waitDone } from "../test-support/board-helpers.ts";
import type { FauxStep } from "../test-support/faux-script.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { startModelServer, type ModelServer } from "../test-support/model-server.ts";
import { PI_CLI } from "../test-support/pi-harness.ts";
import { podmanMissing, requires } from "../test-support/requires.ts";
import { removeContainersOfStore } from "../test-support/target-helpers.ts";
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
	root = mkdtempSync(join(tmpdir(), "pab-budget-ctr-"));
	store = join(root, "store");
	const agentDir = join(root, "agent");
	mkdirSync(agentDir);
	writeFileSync(join(agentDir, "models.json"), JSON.stringify(model.modelsJson()));
	writeFileSync(join(agentDir, "auth.json"), JSON.stringify(model.authJson()));
	writeFileSync(join(agentDir, "settings.json"), JSON.stringify(model.settingsJson()));
	// The link makes each run's pi home from the board's pi agent dir.
	process.env.PI_CODING_AGENT_DIR = agentDir;
	repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
	board = createBoardService({ storeDir: store, piCommand: [process.execPath, PI_CLI], env: { ...process.env } });
	await board.targets.add("box", { kind: "container", engine: "podman", image, network: "host" });
	// Prepares the start cache once per image and package version: the run starts warm.
	await check(
		{ kind: "container", name: "box", engine: "podman", image, network: "host", env: [], max: 1 },
		{ storeDir: store, agentDir },
	);
}, 600_000);

afterAll(async () => {
	if (missing) return;
	removeContainersOfStore(store);
	process.env.PI_CODING_AGENT_DIR = agentDirBefore;
	await model?.close();
	if (root) rmSync(root, { recursive: true, force: true });
});

const STEPS: FauxStep[] = [
	...Array.from(
		{ length: 6 },
		(_, i): FauxStep => ({
			text: `CTRBUDGET step ${i + 1}.`,
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

/** The far worker's pid (in the container's pid namespace), from its run's worker.json. */
const farWorker = (row: BoardRow): number =>
	(
		JSON.parse(
			readFileSync(
				join(store, "targets", "box", "store", "rows", row.id, "runs", row.currentRunId ?? "", "worker.json"),
				"utf8",
			),
		) as { pid: number }
	).pid;

describe("budgets on a container target", () => {
	it("a row's token budget pauses the container row at a turn's end; its raise lets the same worker finish", async (ctx) => {
		requires(ctx, "podman", missing);
		model.setScript({ rules: [{ match: "CTRBUDGET", steps: STEPS }] });
		const dispatched = await board.dispatch({
			prompt: "CTRBUDGET walk the files",
			cwd: repo,
			target: "box",
			budget: { tokens: 40 },
		});
		const paused = await rowWhere(
			board,
			dispatched.id,
			"the container row to pause on its budget",
			(row) => row.state === "needs_input" && row.budget?.paused === true,
			240_000,
		);
		expect(paused).toMatchObject({
			alive: true,
			question: "budget reached: 40 tokens; raise or stop",
			currentRunId: dispatched.currentRunId,
		});
		expect(paused.budget).toMatchObject({ scope: "row", unit: "tokens", limit: 40, spent: 45 });
		const requests = () => model.requests().filter((request) => request.prompt.includes("CTRBUDGET"));
		expect(turns(dispatched.currentRunId ?? "")).toEqual(["box:15", "box:15", "box:15"]);
		expect(requests()).toHaveLength(3);
		const pid = farWorker(paused);
		const raised = await board.budget?.(paused.id, { tokens: 1_000_000 });
		expect(raised).toMatchObject({ scope: "row", outcome: "resumed" });
		const done = await waitDone(board, paused.id, 180_000);
		expect(done).toMatchObject({
			state: "completed",
			latestAssistant: "All steps done.",
			currentRunId: dispatched.currentRunId,
		});
		expect(farWorker(done)).toBe(pid);
		expect(requests()).toHaveLength(STEPS.length);
	}, 600_000);
});
