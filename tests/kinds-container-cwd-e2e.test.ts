/**
 * A container row honours a subdirectory cwd, end to end with real podman: dispatched from `pkg/` of a
 * repository, its tools run in `/workspace/pkg` (they ran at the workspace's top), and what it writes
 * there comes back to `pkg/` of the row's local worktree.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import { waitDone } from "../test-support/board-helpers.ts";
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
	root = mkdtempSync(join(tmpdir(), "pab ctr cwd "));
	store = join(root, "store");
	const agentDir = join(root, "agent");
	mkdirSync(agentDir);
	writeFileSync(join(agentDir, "models.json"), JSON.stringify(model.modelsJson()));
	writeFileSync(join(agentDir, "auth.json"), JSON.stringify(model.authJson()));
	writeFileSync(join(agentDir, "settings.json"), JSON.stringify(model.settingsJson()));
	process.env.PI_CODING_AGENT_DIR = agentDir;
	mkdirSync(join(root, "repo", "pkg"), { recursive: true });
	repo = initRepo(join(root, "repo"), { "top.txt": "top\n", "pkg/inner.txt": "inner\n" });
	board = createBoardService({ storeDir: store, piCommand: [process.execPath, PI_CLI], env: { ...process.env } });
	await board.targets.add("box", { kind: "container", engine: "podman", image, network: "host" });
}, 300_000);

afterAll(async () => {
	if (missing) return;
	removeContainersOfStore(store);
	process.env.PI_CODING_AGENT_DIR = agentDirBefore;
	await model?.close();
	if (root) rmSync(root, { recursive: true, force: true });
});

describe("a container row's cwd", () => {
	it("starts in the subdirectory it was dispatched from, and its work comes back there", async (ctx) => {
		requires(ctx, "podman", missing);
		model.setScript({
			rules: [
				{
					match: "CWD-TASK",
					steps: [
						{ toolCall: { name: "bash", args: { command: "pwd; ls; echo made-here > made.txt" } } },
						{ text: "Made it." },
					],
				},
			],
		});
		const row = await board.dispatch({ prompt: "CWD-TASK where am I", cwd: join(repo, "pkg"), target: "box" });
		const done = await waitDone(board, row.id, 180_000);
		expect(done).toMatchObject({ state: "completed", latestAssistant: "Made it." });
		const session = readFileSync(done.sessionFile, "utf8");
		expect(session).toContain("/workspace/pkg\\ninner.txt");
		const worktree = done.worktreePath ?? "";
		expect(readFileSync(join(worktree, "pkg", "made.txt"), "utf8")).toBe("made-here\n");
		expect(existsSync(join(worktree, "made.txt"))).toBe(false);
	}, 240_000);
});
