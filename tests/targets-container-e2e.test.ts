/**
 * Container targets through the board, end to end, with real podman and the offline worker image:
 * a row runs in a hardened container that sees the image's files and nothing of the user's (no canary
 * from the home directory, no other provider's key), gets --env values off every command line, is
 * steered and answered in place, and its change merges locally; stop removes the container; a
 * SIGKILLed link, then the board's supervise step, then stop leaves no container; three attempts in three containers
 * are compared and merged. Every path holds spaces (the store's name does).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { check } from "../runner/kinds/container/container-transport.mjs";
import type { CheckItem } from "../runner/far/host-check.mjs";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import { git, initRepo } from "../test-support/git-repo.ts";
import { startModelServer, type ModelServer } from "../test-support/model-server.ts";
import { PI_CLI, waitFor } from "../test-support/pi-harness.ts";
import { podmanMissing, requires } from "../test-support/requires.ts";
import {
	containersOfStore,
	procsMentioning,
	removeContainersOfStore,
	threeAttemptsMergeOne,
} from "../test-support/target-helpers.ts";
import { ensureWorkerImage } from "../test-support/worker-image.ts";

const missing = podmanMissing();
let model: ModelServer;
let root: string;
let store: string;
let repo: string;
let board: BoardEngine;
let checked: CheckItem[] = [];
const FORWARDED = `forwarded-${process.pid}-value`;
const canary = join(homedir(), `.pab-canary-${process.pid}`);
const agentDirBefore = process.env.PI_CODING_AGENT_DIR;

beforeAll(async () => {
	if (missing) return;
	const image = (await ensureWorkerImage()).tag;
	model = await startModelServer({ chunkDelayMs: 300 });
	root = mkdtempSync(join(tmpdir(), "pab ctr board "));
	store = join(root, "store");
	// The user's pi home: the loopback provider (the rows') and another one whose secrets stay here.
	const agentDir = join(root, "user agent");
	mkdirSync(agentDir);
	writeFileSync(
		join(agentDir, "models.json"),
		JSON.stringify({
			providers: {
				...(model.modelsJson().providers as object),
				other: {
					baseUrl: "http://127.0.0.1:9/v1",
					api: "openai-completions",
					apiKey: "SECRET-OTHER-MODELS-KEY",
					models: [{ id: "o" }],
				},
			},
		}),
	);
	writeFileSync(
		join(agentDir, "auth.json"),
		JSON.stringify({ ...model.authJson(), other: { type: "api_key", key: "SECRET-OTHER-AUTH-KEY" } }),
	);
	writeFileSync(
		join(agentDir, "settings.json"),
		JSON.stringify({ ...model.settingsJson(), packages: ["npm:not-here"] }),
	);
	// The link makes each run's pi home from the board's pi agent dir.
	process.env.PI_CODING_AGENT_DIR = agentDir;
	writeFileSync(canary, "CANARY-IN-THE-USERS-HOME\n", { mode: 0o600 });
	repo = initRepo(join(root, "my repo"), { "edit.txt": "v1\n", "shared.txt": "base\n" });
	board = createBoardService({
		storeDir: store,
		piCommand: [process.execPath, PI_CLI],
		env: { ...process.env, PAB_FORWARDED: FORWARDED },
	});
	await board.targets.add("box", {
		kind: "container",
		engine: "podman",
		image,
		network: "host",
		env: ["PAB_FORWARDED"],
	});
	// targets check prepares the start cache once per image and package version: every run here starts warm.
	checked = await check(
		{ kind: "container", name: "box", engine: "podman", image, network: "host", env: [], max: 4 },
		{ storeDir: store, agentDir },
	);
}, 300_000);

afterAll(async () => {
	if (missing) return;
	rmSync(canary, { force: true });
	removeContainersOfStore(store);
	process.env.PI_CODING_AGENT_DIR = agentDirBefore;
	await model?.close();
	if (root) rmSync(root, { recursive: true, force: true });
});

const farRun = (row: BoardRow) =>
	join(store, "targets", "box", "store", "rows", row.id, "runs", row.currentRunId ?? "");
const workspace = (row: BoardRow) => join(store, "targets", "box", "work", row.id);

async function rowWhere(
	id: string,
	what: string,
	test: (row: BoardRow) => boolean,
	timeoutMs = 60_000,
): Promise<BoardRow> {
	return waitFor(
		async () => {
			const row = await board.get(id);
			return row && test(row) ? row : undefined;
		},
		what,
		timeoutMs,
	);
}

describe("container targets on the board", () => {
	it("targets check says ok for the worker image on a network that reaches the default provider, and prepared the start cache", (ctx) => {
		requires(ctx, "podman", missing);
		expect(checked.map((i) => `${i.ok ? "ok" : "FAIL"} ${i.name}: ${i.detail}`)).toEqual([
			expect.stringMatching(/^ok engine: podman \d+\.\d+\.\d+ \(runtime \w+\)$/),
			expect.stringMatching(/^ok image: localhost\/pab-worker:\w+ \([0-9a-f]{12}\)$/),
			expect.stringMatching(/^ok node: node v22\./),
			"ok pi: pi 1.6.0",
			expect.stringMatching(/^ok bash: bash \d/),
			expect.stringMatching(/^ok git: git \d/),
			expect.stringMatching(/^ok network: http:\/\/127\.0\.0\.1:\d+\/v1 answers from --network host \(HTTP \d+\)$/),
			expect.stringMatching(/^ok start cache: (prepared in [\d.]+ s|ready)$/),
		]);
	});

	it("runs in a container that sees only what the task needs, is steered and answered in place, and merges locally", async (ctx) => {
		requires(ctx, "podman", missing);
		const probe = [
			`cat ${canary} 2>&1 | head -1`,
			"cat /ab/pi/auth.json /ab/pi/models.json",
			`echo "FWD=$PAB_FORWARDED"`,
			"test -e /etc/debian_version && echo HOST-FS || echo IMAGE-FS",
			"grep CapEff /proc/self/status",
			"touch /usr/probe 2>&1 | head -1",
			"echo v2 > edit.txt && git add -A && git -c user.name=a -c user.email=b commit -qm agent-change && echo wip > wip.txt",
			// Held until the steer is on its way (the workspace's .git is not fetched as a file).
			"while [ ! -e .git/release ]; do sleep 0.1; done",
		].join("; ");
		const words = Array.from({ length: 30 }, (_, n) => `w${n}`).join(" ");
		model.setScript({
			rules: [
				{
					match: "STEER-CTR",
					steps: [
						{ toolCall: { name: "ask_user", args: { question: "Which colour?", options: ["blue", "red"] } } },
						{ text: `Done in blue. ${words} end.` },
					],
				},
				{ match: "CTR-TASK", steps: [{ toolCall: { name: "bash", args: { command: probe } } }] },
			],
		});
		const prompt = `CTR-TASK ${Date.now()} probe the box`;
		const go = model.hold();
		const row = await board.dispatch({ prompt, cwd: repo, target: "box" });
		expect(row).toMatchObject({ target: "box", worktreeMode: "worktree" });
		await model.waitForRequest((r) => r.prompt === prompt, "the worker's first request from the container");
		// Held at the model: neither the prompt nor the forwarded value is on any command line.
		expect(procsMentioning(prompt.slice(0, 20))).toEqual([]);
		expect(procsMentioning(FORWARDED)).toEqual([]);
		// The run's container (a one-shot preparing the start cache may run beside it).
		expect(containersOfStore(store)).toContain(`ab-${row.currentRunId}`);
		go();

		const working = await rowWhere(
			row.id,
			"the bash tool to run in the container",
			(r) => r.live?.tool?.name === "bash",
		);
		const worker = JSON.parse(readFileSync(join(farRun(working), "worker.json"), "utf8")) as { pid: number };
		expect((await board.reply(row.id, "STEER-CTR use blue", { receiptTimeoutMs: 60_000 })).delivery).toBe("steer");
		writeFileSync(join(workspace(row), ".git", "release"), "");

		const asking = await rowWhere(row.id, "the question in place", (r) => r.state === "needs_input" && r.alive);
		expect(asking.question).toBe("Which colour?");
		const streamed = rowWhere(
			row.id,
			"streamed words before the message ends",
			(r) => /w\d+/.test(r.live?.text ?? "") && !r.live?.text?.includes("end."),
		);
		expect((await board.reply(row.id, "blue", { receiptTimeoutMs: 60_000 })).delivery).toBe("answer");
		await streamed;
		const done = await waitDone(board, row.id, 90_000);
		expect(done).toMatchObject({ state: "completed", currentRunId: row.currentRunId });
		expect(done.latestAssistant).toContain("Done in blue.");
		expect(done.receipts?.map((r) => [r.status, r.as])).toEqual([
			["delivered", "steer"],
			["delivered", "answer"],
		]);
		// One worker in the container served the task, the steer and the answer.
		expect(JSON.parse(readFileSync(join(farRun(done), "worker.json"), "utf8"))).toMatchObject({ pid: worker.pid });
		const events = readFileSync(join(done.runDir ?? "", "events.jsonl"), "utf8");
		const seqs = events
			.split("\n")
			.filter(Boolean)
			.map((line) => (JSON.parse(line) as { seq: number }).seq);
		expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
		expect(
			readFileSync(done.sessionFile).equals(
				readFileSync(join(store, "targets", "box", "store", "sessions", row.id, `${row.id}.jsonl`)),
			),
		).toBe(true);

		const toolResult =
			events
				.split("\n")
				.filter(Boolean)
				.map((line) => JSON.parse(line) as { type: string; result?: string })
				.find((e) => e.type === "tool_execution_end")?.result ?? "";
		expect(toolResult).toContain("No such file or directory");
		expect(toolResult).not.toContain("CANARY-IN-THE-USERS-HOME");
		expect(toolResult).toContain(model.apiKey);
		expect(toolResult).not.toContain("SECRET-OTHER");
		expect(toolResult).toContain(`FWD=${FORWARDED}`);
		expect(toolResult).toContain("IMAGE-FS");
		expect(toolResult).toMatch(/CapEff:\s+0000000000000000/);
		expect(toolResult).toContain("Read-only file system");

		// The code came back and merges locally; the container is gone.
		expect(readFileSync(join(done.worktreePath ?? "", "wip.txt"), "utf8")).toBe("wip\n");
		const merged = await board.merge(row.id, { commit: true });
		expect(merged.status).toBe("merged");
		expect(readFileSync(join(repo, "edit.txt"), "utf8")).toBe("v2\n");
		expect(readFileSync(join(repo, "wip.txt"), "utf8")).toBe("wip\n");
		expect(git(repo, "log", "--format=%s")).toContain("agent-change");

		// A reply to the finished row is a new run in the same workspace, with the conversation, moved
		// (inside a container) to the local branch the merge committed on.
		model.setScript({
			rules: [
				{
					match: "CTR-AGAIN",
					steps: [
						{
							toolCall: {
								name: "bash",
								args: { command: "git log -1 --format=%s && git status --porcelain && cat wip.txt" },
							},
						},
						{ text: "Again." },
					],
				},
			],
		});
		expect((await board.reply(row.id, "CTR-AGAIN one more thing")).delivery).toBe("new-run");
		const resumed = await waitDone(board, row.id, 90_000);
		expect(resumed).toMatchObject({ state: "completed", latestAssistant: "Again." });
		expect(JSON.stringify(model.requests().find((r) => r.prompt === "CTR-AGAIN one more thing")?.messages)).toContain(
			"Done in blue.",
		);
		const again =
			readFileSync(join(resumed.runDir ?? "", "events.jsonl"), "utf8")
				.split("\n")
				.filter(Boolean)
				.map((line) => JSON.parse(line) as { type: string; result?: string })
				.find((e) => e.type === "tool_execution_end")?.result ?? "";
		expect(again).toBe(`${git(done.worktreePath ?? "", "log", "-1", "--format=%s")}\nwip\n`);
		await waitFor(() => containersOfStore(store).length === 0 || undefined, "the container to be removed");
	}, 240_000);

	it("stop removes the container; a SIGKILLed link, the supervise step, then stop leaves none; a container killed from outside fails its row with the reason", async (ctx) => {
		requires(ctx, "podman", missing);
		model.setScript({
			rules: [
				{
					match: "CTR-STALL",
					steps: [{ toolCall: { name: "bash", args: { command: "sleep 300" } } }, { text: "never" }],
				},
			],
		});
		const rows = await Promise.all(
			["stop", "link", "kill"].map((what) =>
				board.dispatch({ prompt: `CTR-STALL ${what}`, cwd: repo, target: "box" }),
			),
		);
		const [plain, orphaned, killed] = rows as [BoardRow, BoardRow, BoardRow];
		for (const row of rows)
			await rowWhere(row.id, "the tool to run in the container", (r) => r.live?.tool?.name === "bash");
		const runContainers = () =>
			containersOfStore(store).filter((name) => rows.some((row) => name === `ab-${row.currentRunId}`));
		expect(runContainers()).toHaveLength(3);

		expect((await board.stop(plain.id)).state).toBe("stopped");
		expect(runContainers()).not.toContain(`ab-${plain.currentRunId}`);

		const link = JSON.parse(readFileSync(join(orphaned.runDir ?? "", "runner.json"), "utf8")) as { pid: number };
		process.kill(link.pid, "SIGKILL");
		await waitFor(() => !existsSync(`/proc/${link.pid}`) || undefined, "the link to be gone");
		// A read shows the run waiting for a new link (it goes on meanwhile); the store's keeper (or the
		// supervise step: the board's tick, or list) gives it one.
		expect(await board.get(orphaned.id)).toMatchObject({ state: "working" });
		await board.supervise();
		await rowWhere(orphaned.id, "a new link", (r) => r.state === "working" && r.alive === true);
		expect((await board.stop(orphaned.id)).state).toBe("stopped");

		spawnSync("podman", ["kill", `ab-${killed.currentRunId}`], { stdio: "ignore" });
		const failed = await waitDone(board, killed.id, 60_000);
		expect(failed).toMatchObject({ state: "failed" });
		expect(failed.error).toMatch(/container was killed/);
		await waitFor(() => runContainers().length === 0 || undefined, "no container of these runs");
	}, 240_000);

	it("runs three attempts in three containers, compares them locally and merges one", async (ctx) => {
		requires(ctx, "podman", missing);
		await threeAttemptsMergeOne(board, model, {
			tag: "CTR-ATTEMPT",
			target: "box",
			repo,
			whileRunning: async (rows) => {
				const seen = new Set<string>();
				await waitFor(() => {
					for (const name of containersOfStore(store))
						if (rows.some((row) => name === `ab-${row.currentRunId}`)) seen.add(name);
					return seen.size === 3 || undefined;
				}, "three containers, one per attempt");
			},
		});
	}, 240_000);

	it("bad input fails the row with the reason and leaves no container: a missing image, no engine, a network that cannot reach the model", async (ctx) => {
		requires(ctx, "podman", missing);
		await board.targets.add("gone", {
			kind: "container",
			engine: "podman",
			image: "localhost/pab-no-such-image:1",
			network: "host",
		});
		await board.targets.add("offline", {
			kind: "container",
			engine: "podman",
			image: (await ensureWorkerImage()).tag,
			network: "none",
		});
		// A target whose link (one per target, started by the first run handed to it) finds no engine on its PATH.
		// Its board is the only one that pumps its store: a dispatch returns before its pump, and any other
		// pump of the same store (this file's board, the keeper that board started) would start the link with
		// podman on its PATH.
		const bareStore = join(root, "store without an engine");
		const bin = join(root, "bin without podman");
		mkdirSync(bin);
		symlinkSync(spawnSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).stdout.trim(), join(bin, "git"));
		const noEngine = createBoardService({
			storeDir: bareStore,
			piCommand: [process.execPath, PI_CLI],
			env: { ...process.env, PATH: bin },
		});
		await noEngine.targets.add("bare", {
			kind: "container",
			engine: "podman",
			image: (await ensureWorkerImage()).tag,
			network: "host",
		});
		const rows = await Promise.all([
			board.dispatch({ prompt: "CTR-NEVER image", cwd: repo, target: "gone" }),
			noEngine.dispatch({ prompt: "CTR-NEVER engine", cwd: repo, target: "bare" }),
			board.dispatch({ prompt: "CTR-NEVER network", cwd: repo, target: "offline" }),
		]);
		const [image, engine, network] = await Promise.all(
			rows.map((row, n) => waitDone(n === 1 ? noEngine : board, row.id, 90_000)),
		);
		expect(image).toMatchObject({
			state: "failed",
			error: expect.stringMatching(
				/^cannot start on gone: the image localhost\/pab-no-such-image:1 is not on podman's machine \(the board never pulls\): build it from the package's Dockerfile: podman build -t localhost\/pab-no-such-image:1 - < /,
			),
		});
		expect(engine).toMatchObject({
			state: "failed",
			error: expect.stringMatching(/^cannot start on bare: podman is not installed or not on PATH: install podman/),
		});
		// pi's own words: the provider on this machine's loopback is not there for --network none.
		expect(network).toMatchObject({
			state: "failed",
			error: expect.stringMatching(/^Connection error\.: connect ECONNREFUSED 127\.0\.0\.1:\d+$/),
		});
		expect(
			[...containersOfStore(store), ...containersOfStore(bareStore)].filter((name) =>
				rows.some((row) => name === `ab-${row.currentRunId}`),
			),
		).toEqual([]);
	}, 120_000);
});
