/**
 * What a new user of a container target meets (#28 items 5 and 10), with real podman and the offline
 * worker image. A check whose engine fails (podman on a PATH without /usr/sbin: its network helper
 * cannot be found) reports the engine's own words and does not blame the image; it says each line as it
 * checks it; and `/agent-board targets check` in headless pi prints the report as a report (on the
 * output, exit 1), what it checks on stderr as it goes. A row's container workspace goes with its local
 * worktree.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import type { CheckItem } from "../src/board/engine/types.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import { initRepo } from "../test-support/git-repo.ts";
import { startModelServer, type ModelServer, writeAgentDir } from "../test-support/model-server.ts";
import { createTestAgent, PI_CLI, runPi, type TestAgent } from "../test-support/pi-harness.ts";
import { podmanMissing, requires } from "../test-support/requires.ts";
import { ensureWorkerImage } from "../test-support/worker-image.ts";
import { removeContainersOfStore } from "../test-support/target-helpers.ts";

const missing = podmanMissing();
/** What a user's login shell may give podman: no /usr/sbin or /sbin, where its network helpers live. */
const NO_SBIN = `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`;
let model: ModelServer;
let agent: TestAgent;
let root: string;
let store: string;
let repo: string;
let board: BoardEngine;
let image: string;

beforeAll(async () => {
	if (missing) return;
	image = (await ensureWorkerImage()).tag;
	model = await startModelServer();
	agent = createTestAgent();
	const agentDir = writeAgentDir(model, join(agent.root, "user agent"));
	root = mkdtempSync(join(tmpdir(), "pab-newcomer-ctr-"));
	store = join(root, "store");
	repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
	board = createBoardService({
		storeDir: store,
		piCommand: [process.execPath, PI_CLI],
		env: { ...agent.env, PI_CODING_AGENT_DIR: agentDir },
	});
	// The engine's default network (a bridge): the one whose helpers a PATH without /usr/sbin misses.
	await board.targets.add("bridge", { kind: "container", engine: "podman", image });
	await board.targets.add("box", { kind: "container", engine: "podman", image, network: "host" });
}, 300_000);

afterAll(async () => {
	if (missing) return;
	removeContainersOfStore(store);
	await model?.close();
	agent?.cleanup();
	if (root) rmSync(root, { recursive: true, force: true });
});

describe("a new user's container target", () => {
	it("reports the engine's own words when podman fails, without blaming the image, each line as it checks it", async (ctx) => {
		requires(ctx, "podman", missing);
		const seen: string[] = [];
		const saved = process.env.PATH;
		process.env.PATH = NO_SBIN;
		let check: Awaited<ReturnType<typeof board.targets.check>>;
		try {
			check = await board.targets.check("bridge", {
				progress: {
					checking: (what) => seen.push(`checking ${what}`),
					item: (item: CheckItem) => seen.push(`${item.ok ? "ok" : "FAIL"} ${item.name}`),
				},
			});
		} finally {
			process.env.PATH = saved;
		}
		const container = check.items.find((item) => item.name === "container");
		expect(container).toMatchObject({
			ok: false,
			detail: expect.stringMatching(
				/^podman could not start a container of .*: podman failed \(exit \d+\) \(podman: .*(iptables|netavark|aardvark)/,
			),
			fix: expect.stringContaining("on PATH (for root, /usr/sbin and /sbin)"),
		});
		expect(check.items.some((item) => item.name === "node")).toBe(false);
		// Each line said when it was known, after what it checks and before the next step begins.
		expect(seen).toEqual([
			"checking podman itself",
			"ok engine",
			`checking the image ${image}`,
			"ok image",
			`checking a container of ${image}: node, pi, bash, git and the network`,
			"FAIL container",
			"FAIL pi, bash, git",
		]);
	}, 300_000);

	it("prints the check as a report in headless pi, fails the command, and says what it checks as it goes", async (ctx) => {
		requires(ctx, "podman", missing);
		const result = await runPi(agent, {
			args: ["-p", "/agent-board targets check bridge"],
			env: { AGENT_BOARD_DIR: store, PATH: NO_SBIN },
			timeoutMs: 240_000,
		});
		expect(result.code).toBe(1);
		const lines = result.stdout.trim().split("\n");
		expect(lines[0]).toMatch(/^ok {4}engine +podman \d/);
		expect(result.stdout).toMatch(/^FAIL {2}container +podman could not start a container of /m);
		expect(lines.at(-1)).toBe("bridge: not ready (2 problems)");
		expect(result.stderr).not.toContain("agent-board:");
		expect(result.stderr).toContain("checking podman itself...\n");
		expect(result.stderr).toContain(`checking a container of ${image}: node, pi, bash, git and the network...\n`);
	}, 300_000);

	it("removes a row's container workspace with its local worktree", async (ctx) => {
		requires(ctx, "podman", missing);
		model.setScript({ rules: [], fallback: [{ text: "Nothing to change." }] });
		const row = await board.dispatch({ prompt: "a row in a box", cwd: repo, target: "box" });
		expect(await waitDone(board, row.id, 240_000)).toMatchObject({ state: "completed" });
		const workspace = join(store, "targets", "box", "work", row.id);
		expect(existsSync(join(workspace, ".git"))).toBe(true);
		const removed = await board.removeWorktree(row.id);
		expect(removed.far).toBe(`removed its container workspace too (${workspace})`);
		expect(existsSync(workspace)).toBe(false);
	}, 300_000);
});
