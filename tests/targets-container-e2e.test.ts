/**
 * Container targets end to end with real podman and an image built offline from this machine's files:
 * the unchanged runner and pi 1.6 with our extension run inside a hardened container, see the image's
 * files and nothing of the user's (no canary from the home directory, no other provider's key), get
 * --env values without them touching a command line, take an inbox message written on this side
 * through the bind mount, and are stopped (signal forwarded by --init) and found by label.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { containerLabelsArgs, containerListArgs, containerName, containerRunArgs, containerStopArgs, orphanContainers } from "../runner/targets/container-argv.mjs";
import { followRun } from "../runner/targets/far-follow.mjs";
import { PACKAGE_ROOT, prepareRun } from "../runner/targets/far-run.mjs";
import { repoKey } from "../runner/targets/git-travel.mjs";
import { makePiHome } from "../runner/pi-home.mjs";
import { runProcesses } from "../runner/proc.mjs";
import { git, initRepo } from "../test-support/git-repo.ts";
import { LOOPBACK_MODEL, LOOPBACK_PROVIDER, startModelServer, type ModelServer } from "../test-support/model-server.ts";
import { waitFor } from "../test-support/pi-harness.ts";
import { podmanMissing, requires } from "../test-support/requires.ts";
import { followLog, procsMentioning, type FollowLog } from "../test-support/target-helpers.ts";
import { ensureWorkerImage } from "../test-support/worker-image.ts";

const missing = podmanMissing();
let model: ModelServer;
let image: string;
let store: string;
let agentDir: string;
let repo: string;
const canary = join(homedir(), `.pab-canary-${process.pid}`);

beforeAll(async () => {
	if (missing) return;
	image = (await ensureWorkerImage()).tag;
	model = await startModelServer();
	store = mkdtempSync(join(tmpdir(), "pab-ctr-e2e-"));
	agentDir = join(store, "user-agent");
	mkdirSync(agentDir);
	writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: { ...(model.modelsJson().providers as object), other: { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "SECRET-OTHER-MODELS-KEY", models: [{ id: "o" }] } } }));
	writeFileSync(join(agentDir, "auth.json"), JSON.stringify({ ...model.authJson(), other: { type: "api_key", key: "SECRET-OTHER-AUTH-KEY" } }));
	writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ ...model.settingsJson(), packages: ["npm:not-here"] }));
	writeFileSync(canary, "CANARY-IN-THE-USERS-HOME\n", { mode: 0o600 });
	repo = initRepo(join(store, "repo"), { "README.md": "hello\n" });
}, 240_000);

afterAll(async () => {
	if (missing) return;
	rmSync(canary, { force: true });
	await model?.close();
	if (store) rmSync(store, { recursive: true, force: true });
});

interface ContainerRun {
	runId: string;
	runDir: string;
	worktree: string;
	log: FollowLog;
	ended: Promise<void>;
	deliver(message: Record<string, unknown>): void;
}

/** What the link does for a container run: prepare its dirs, make its pi home, start it, follow it. */
function startContainerRun(rowId: string, prompt: string, forwarded: Record<string, string> = {}): ContainerRun {
	const runId = `${rowId}-run1`;
	const dir = join(store, "targets/ctr");
	const prepared = prepareRun(dir, { rowId, runId, repoKey: repoKey(repo), base: git(repo, "rev-parse", "HEAD"), prompt, env: { PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1" }, createdAt: Date.now(), session: null }, { container: { source: repo } });
	const piHome = join(dir, "pi", runId);
	makePiHome({ agentDir, dest: piHome, model: `${LOOPBACK_PROVIDER}/${LOOPBACK_MODEL}` });
	const argv = containerRunArgs({
		engine: "podman",
		image,
		network: "host",
		env: Object.keys(forwarded),
		storeDir: store,
		rowId,
		runId,
		mounts: { pkg: PACKAGE_ROOT, run: prepared.runDir, session: dirname(prepared.sessionFile), piHome, workspace: prepared.worktree, objects: prepared.objects },
		uid: process.getuid?.() ?? 0,
		gid: process.getgid?.() ?? 0,
	});
	const started = spawnSync("podman", argv, { encoding: "utf8", env: { ...process.env, ...forwarded } });
	if (started.status !== 0) throw new Error(`podman run failed: ${started.stderr}`);
	// The runner's liveness comes from the engine: its pid inside means nothing on this side.
	let exited = false;
	const waiter = spawn("podman", ["wait", containerName(runId)], { stdio: "ignore" });
	const log = followLog();
	let finish: () => void = () => undefined;
	const ended = new Promise<void>((resolve) => (finish = resolve));
	const follower = followRun({ runDir: prepared.runDir, fromSeq: 0, sessionFrom: 0, sessionFile: prepared.sessionFile, worktree: null, rowId, alive: () => !exited, send: (frame) => log.add(frame), onDone: finish });
	waiter.on("exit", () => {
		exited = true;
		follower.poke();
	});
	return { runId, runDir: prepared.runDir, worktree: prepared.worktree, log, ended, deliver: follower.deliver };
}

function containersOfStore(): string[] {
	return spawnSync("podman", containerListArgs("podman", undefined, store), { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
}

describe("container targets", () => {
	it("runs the runner and pi in a hardened container that sees only what the task needs", async (ctx) => {
		requires(ctx, "podman", missing);
		const probe = [
			`cat ${canary} 2>&1 | head -1`,
			"cat /ab/pi/auth.json /ab/pi/models.json",
			"echo FWD=$PAB_FORWARDED",
			"test -e /etc/debian_version && echo HOST-FS || echo IMAGE-FS",
			"grep CapEff /proc/self/status",
			"touch /usr/probe 2>&1 | head -1",
			"echo made > made.txt",
		].join("; ");
		model.setScript({ rules: [{ match: "CTR-RUN", steps: [{ toolCall: { name: "bash", args: { command: probe } } }, { text: "Probed." }] }], fallback: [{ text: "After the steer." }] });
		let release = model.hold();
		const run = startContainerRun("crow1", "CTR-RUN probe the box", { PAB_FORWARDED: "forwarded-secret-value" });
		await model.waitForRequest((r) => r.prompt.startsWith("CTR-RUN"), "the worker in the container");
		// The forwarded value is in podman's environment, on no command line.
		expect(procsMentioning("forwarded-secret-value")).toEqual([]);
		const first = release;
		release = model.hold();
		first();
		await model.waitForRequest((r) => r.messages.some((m) => m.role === "tool"), "the request after the tool ran");
		run.deliver({ id: "steer-c1", kind: "message", text: "STEER-IN-CONTAINER", deliverAs: "steer", at: Date.now() });
		await waitFor(() => run.log.frames.some((f) => f.t === "receipt" && f.receipt.id === "steer-c1"), "the runner inside to answer the inbox message");
		release();
		await run.ended;

		expect(run.log.end).toMatchObject({ state: "completed" });
		expect(run.log.seqs()).toEqual(Array.from({ length: run.log.seqs().length }, (_, i) => i + 1));
		const toolResult = run.log.eventLines().map((line) => JSON.parse(line) as { type: string; result?: string }).find((e) => e.type === "tool_execution_end")?.result ?? "";
		expect(toolResult).toContain("No such file or directory");
		expect(toolResult).not.toContain("CANARY-IN-THE-USERS-HOME");
		expect(toolResult).toContain(model.apiKey);
		expect(toolResult).not.toContain("SECRET-OTHER");
		expect(toolResult).toContain("FWD=forwarded-secret-value");
		expect(toolResult).toContain("IMAGE-FS");
		expect(toolResult).toMatch(/CapEff:\s+0000000000000000/);
		expect(toolResult).toContain("Read-only file system");
		expect(readFileSync(join(run.worktree, "made.txt"), "utf8")).toBe("made\n");
		expect(run.log.frames.find((f) => f.t === "receipt" && f.receipt.id === "steer-c1")).toMatchObject({ receipt: { status: "delivered" } });
		expect(model.requests().filter((r) => r.prompt === "STEER-IN-CONTAINER")).toHaveLength(1);
		expect(run.log.session.equals(readFileSync(join(store, "targets/ctr/store/sessions/crow1/crow1.jsonl")))).toBe(true);
		// --rm: the container is gone once its run ended.
		await waitFor(() => !containersOfStore().includes(containerName(run.runId)), "the container to be removed");
	});

	it("stop ends the container with its run recorded as stopped; a container no row owns is found by label", async (ctx) => {
		requires(ctx, "podman", missing);
		model.setScript({ rules: [{ match: "CTR-STALL", steps: [{ stall: true }] }] });
		const run = startContainerRun("crow2", "CTR-STALL wait forever");
		await model.waitForRequest((r) => r.prompt.startsWith("CTR-STALL"), "the stalled worker");
		expect(runProcesses(run.runId).length).toBeGreaterThan(0);
		const names = containersOfStore();
		expect(names).toEqual([containerName(run.runId)]);
		const labels = spawnSync("podman", containerLabelsArgs("podman", undefined, names), { encoding: "utf8" }).stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, string>);
		const found = names.map((name, i) => ({ name, labels: labels[i] ?? {} }));
		// Its row is gone (a board read found no owner): reconcile would remove it.
		expect(orphanContainers(found, () => false)).toEqual([containerName(run.runId)]);
		const stop = containerStopArgs("podman", undefined, run.runId, 10);
		expect(spawnSync("podman", stop.stop, { encoding: "utf8" }).status).toBe(0);
		spawnSync("podman", stop.remove, { stdio: "ignore" });
		await run.ended;
		expect(run.log.end).toMatchObject({ state: "stopped" });
		expect(containersOfStore()).toEqual([]);
		expect(runProcesses(run.runId)).toEqual([]);
		expect(existsSync(join(run.runDir, "runner.json"))).toBe(true);
	});
});
