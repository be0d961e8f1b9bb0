/**
 * A budget on a container target on a remote engine (`--engine-host`: podman's API service run rootless
 * as a second Unix user behind its own sshd, test-support/remote-engine.ts), end to end: the far runner
 * in the engine's station holds each turn's end and the link on this machine decides it, so a row's token
 * budget pauses the row at the end of the turn that crossed it (the budget's question, no request after
 * it, every turn's spend in this machine's ledger), and raising it lets the same run go on in place.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import { pauseAndRaiseInPlace } from "../test-support/budget-helpers.ts";
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

describe("budgets on a remote engine's container target", () => {
	it("a row's token budget pauses the row at a turn's end; its raise lets the same run go on in place", async (ctx) => {
		requires(ctx, "sshd, podman and uidmap", missing);
		await pauseAndRaiseInPlace({ board, model, repo, target: "far", tag: "ENGINEBUDGET" });
	}, 600_000);
});
