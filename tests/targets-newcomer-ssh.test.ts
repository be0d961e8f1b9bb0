/**
 * What a new user of an ssh target meets (#28 items 4 and 10), with a real sshd and a second Unix user:
 * a host whose pi has no model is not called ready (the check asks the host's pi which model a run would
 * use, and a key forwarded with --env counts), and a run that fails there says pi's first error, not the
 * last line of its help text (as a local run does); a row's workspace on the host goes with its local
 * worktree, or the board says where it stays.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import { LOOPBACK_MODEL, LOOPBACK_PROVIDER, type ModelServer } from "../test-support/model-server.ts";
import { createTestAgent, PI_CLI, type TestAgent } from "../test-support/pi-harness.ts";
import { requires, sshdMissing } from "../test-support/requires.ts";
import { startSshBoard, type SshBoard } from "../test-support/ssh-board.ts";
import type { SshHost } from "../test-support/sshd.ts";

const missing = sshdMissing();
const NO_KEY = "worker exited with code 1: No API key found for the selected model.";
let host: SshHost;
let model: ModelServer;
let repo: string;
let board: BoardEngine;

let fixture: SshBoard | undefined;

beforeAll(async () => {
	if (missing) return;
	fixture = await startSshBoard("pab-newcomer-ssh-", {
		env: (server) => ({ PAB_MODEL_KEY: server.apiKey }),
		bare: true,
		check: false,
	});
	({ host, model, repo, board } = fixture);
}, 120_000);

afterAll(async () => {
	if (missing) return;
	await fixture?.cleanup();
});

const farWork = (id: string) => join(host.user.home, ".agent-board", "work", id);

describe("a new user's ssh target", () => {
	it("is not ready while the host's pi has no model; a run there fails with pi's first error; a key forwarded with --env counts", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const bare = await board.targets.check("h", { install: true });
		expect(bare.ok).toBe(false);
		expect(bare.items.map((item) => item.name)).toEqual([
			"reachable",
			"node",
			"pi",
			"model",
			"git",
			"dir",
			"disk",
			"board files",
		]);
		expect(bare.items.filter((item) => !item.ok)).toEqual([
			{
				name: "model",
				ok: false,
				detail: "no model configured on the host",
				fix: expect.stringContaining("copy your models.json/settings.json"),
			},
		]);

		const row = await board.dispatch({ prompt: "never answered", cwd: repo, target: "h" });
		const failed = await waitDone(board, row.id, 120_000);
		expect(failed).toMatchObject({ state: "failed", error: NO_KEY });

		// The provider's key named in models.json ($PAB_MODEL_KEY), its value only on the board's machine:
		// no key there until the target forwards it.
		const models = model.modelsJson() as { providers: Record<string, Record<string, unknown>> };
		models.providers[LOOPBACK_PROVIDER] = { ...models.providers[LOOPBACK_PROVIDER], apiKey: "$PAB_MODEL_KEY" };
		host.user.writePiConfig({ models, settings: model.settingsJson() });
		const keyless = await board.targets.check("h");
		expect(keyless.items.find((item) => item.name === "model")).toMatchObject({ ok: false });
		await board.targets.add("hk", {
			kind: "ssh",
			host: host.alias,
			sshConfig: host.configFile,
			env: ["PAB_MODEL_KEY"],
		});
		const keyed = await board.targets.check("hk");
		expect(keyed.items.find((item) => item.name === "model")).toEqual({
			name: "model",
			ok: true,
			detail: `runs use ${LOOPBACK_PROVIDER}/${LOOPBACK_MODEL} (the host's pi configuration)`,
		});
		expect(keyed.ok).toBe(true);
		model.setScript({ rules: [], fallback: [{ text: "Done on the host." }] });
		const done = await waitDone(
			board,
			(await board.dispatch({ prompt: "keyed run", cwd: repo, target: "hk" })).id,
			120_000,
		);
		expect(done).toMatchObject({ state: "completed", latestAssistant: "Done on the host." });
	}, 300_000);

	it("removes the row's workspace on the host with its local worktree, or says where it stays", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		host.user.writePiConfig({ models: model.modelsJson(), auth: model.authJson(), settings: model.settingsJson() });
		model.setScript({ rules: [], fallback: [{ text: "Nothing to change." }] });
		const row = await board.dispatch({ prompt: "a row to remove", cwd: repo, target: "h" });
		expect(await waitDone(board, row.id, 120_000)).toMatchObject({ state: "completed" });
		expect(existsSync(farWork(row.id))).toBe(true);
		const removed = await board.removeWorktree(row.id);
		expect(removed.far).toBe(`removed its workspace on h too (${host.alias}:${farWork(row.id)})`);
		expect(existsSync(farWork(row.id))).toBe(false);
		// Its branch and refs left the host's mirror too (asked as the host's user: the mirror is theirs).
		const refs = await host.ssh(
			`git -C .agent-board/repos/*.git for-each-ref --format='%(refname)' | grep -c ${row.id} || true`,
		);
		expect(refs.stdout.trim()).toBe("0");

		// A host that cannot be reached: the local worktree goes, and the board says where the other stays.
		const other = await board.dispatch({ prompt: "a row on a host that went away", cwd: repo, target: "h" });
		expect(await waitDone(board, other.id, 120_000)).toMatchObject({ state: "completed" });
		await host.stop();
		try {
			const kept = await board.removeWorktree(other.id);
			expect(kept.far).toMatch(
				new RegExp(`^its workspace on h stays at ${host.alias}:\\.agent-board/work/${other.id}: .+`),
			);
			expect((await board.get(other.id))?.worktreePath).toBeUndefined();
		} finally {
			await host.start();
		}
		expect(existsSync(farWork(other.id))).toBe(true);
	}, 300_000);
});

describe("a local run that fails at start", () => {
	let agent: TestAgent | undefined;
	afterAll(() => agent?.cleanup());

	it("says pi's first error, not the last line of its help text", async () => {
		agent = createTestAgent();
		// A pi home with no model at all: what a new user's pi has before /login.
		const empty = join(agent.root, "no-models");
		mkdirSync(empty);
		const bare = createBoardService({
			storeDir: join(agent.root, "store"),
			piCommand: [process.execPath, PI_CLI],
			env: { ...agent.env, PI_CODING_AGENT_DIR: empty },
		});
		const row = await bare.dispatch({ prompt: "never answered", cwd: agent.cwd });
		expect(await waitDone(bare, row.id, 60_000)).toMatchObject({ state: "failed", error: NO_KEY });
	}, 120_000);
});
