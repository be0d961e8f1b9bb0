/**
 * A budget on a container target, end to end with real podman and the offline worker image: the far
 * runner in the container holds each turn's end and the link on this machine decides it, so a row's
 * token budget pauses the row at the end of the turn that crossed it (the budget's question, no request
 * after it, every turn's spend in this machine's ledger), and raising it lets the same worker in the same
 * container finish.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { check } from "../runner/kinds/container/container-transport.mjs";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { pauseAndRaiseInPlace, workerPidIn } from "../test-support/budget-helpers.ts";
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

/** The far worker's pid (in the container's pid namespace), from its run's worker.json. */
const farWorker = (row: BoardRow): number =>
	workerPidIn(join(store, "targets", "box", "store", "rows", row.id, "runs", row.currentRunId ?? ""));

describe("budgets on a container target", () => {
	it("a row's token budget pauses the container row at a turn's end; its raise lets the same worker finish", async (ctx) => {
		requires(ctx, "podman", missing);
		await pauseAndRaiseInPlace({ board, model, repo, target: "box", tag: "CTRBUDGET", farWorker });
	}, 600_000);
});
