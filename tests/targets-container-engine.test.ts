/**
 * A container target's engine work with real podman and the offline worker image, without pi: the
 * workspace snapshot runs inside containers and comes back by upload-pack, so a hostile .git/config in
 * the workspace never runs on this side; reconcile by label after the process that started a container
 * was SIGKILLed; `targets check` lines for what is wrong (the all-ok check is the e2e file's); bad input (a container killed from outside, a full disk, no
 * engine, an engine that cannot be reached). Every path here holds spaces (the store's name does).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { containerName, containerRunArgs } from "../runner/kinds/container/container-argv.mjs";
import { checkContainerTarget } from "../runner/kinds/container/container-check.mjs";
import { EngineError, engineRun } from "../runner/kinds/container/container-engine.mjs";
import { alive, containerDirs, containerPlace, type ContainerRun } from "../runner/kinds/container/container-run.mjs";
import { endReason, reconcile, wait } from "../runner/kinds/container/container-transport.mjs";
import { fetchWork, snapshot } from "../runner/kinds/container/container-workspace.mjs";
import { prepareRun } from "../runner/far/far-run.mjs";
import { PACKAGE_ROOT } from "../runner/far/package-files.mjs";
import { readProcessFile } from "../runner/store/safe-read.mjs";
import { layOver, repoKey } from "../runner/link/git-travel.mjs";
import { isAlive } from "../runner/store/proc.mjs";
import { git, initRepo } from "../test-support/git-repo.ts";
import { waitFor } from "../test-support/pi-harness.ts";
import { notRoot, podmanMissing, requires } from "../test-support/requires.ts";
import { containersOfStore, farTree } from "../test-support/target-helpers.ts";
import { ensureImageWithout, ensureWorkerImage } from "../test-support/worker-image.ts";

const missing = podmanMissing();
let image: string;
let store: string;
let repo: string;
let base: string;
/** Outside every mount: a trap that finds it ran on this side. */
let hostMarks: string;

beforeAll(async () => {
	if (missing) return;
	image = (await ensureWorkerImage()).tag;
	store = mkdtempSync(join(tmpdir(), "pab ctr engine "));
	hostMarks = mkdtempSync(join(tmpdir(), "pab-host-marks-"));
	repo = initRepo(join(store, "my repo"), { "README.md": "hello\n", "src.txt": "one\n" });
	base = git(repo, "rev-parse", "HEAD");
}, 300_000);

afterAll(() => {
	if (missing) return;
	// Every container of this file's stores (a failed test may leave one).
	const listed = spawnSync(
		"podman",
		[
			"ps",
			"-a",
			"--filter",
			"label=agent-board.store",
			"--format",
			'{{.Names}}\t{{index .Labels "agent-board.store"}}',
		],
		{ encoding: "utf8" },
	).stdout;
	const ours = listed
		.split("\n")
		.filter((line) => line.split("\t")[1]?.startsWith(store))
		.map((line) => line.split("\t")[0] ?? "");
	if (ours.length) spawnSync("podman", ["rm", "-f", ...ours], { stdio: "ignore" });
	for (const dir of [store, hostMarks]) if (dir) rmSync(dir, { recursive: true, force: true });
});

function containerRun(rowId: string, storeDir = store): ContainerRun {
	const runId = `${rowId}-r1`;
	return {
		target: { kind: "container", name: "box", engine: "podman", image, network: "none", env: [], max: 4 },
		storeDir,
		rowId,
		runId,
		runDir: join(storeDir, "rows", rowId, "runs", runId),
		sessionFile: join(storeDir, "sessions", `${rowId}.jsonl`),
		repo,
		worktree: join(storeDir, "worktrees", rowId),
		base,
		subdir: "",
		agentDir: join(storeDir, "agent"),
		forwarded: {},
		config: {
			rowId,
			runId,
			repoKey: repoKey(repo),
			base,
			prompt: "unused",
			env: {},
			createdAt: Date.now(),
			session: null,
		},
	};
}

/** The run's dirs and workspace as startRun makes them, and a container that only sleeps (no pi here). */
async function startSleeper(run: ContainerRun): Promise<void> {
	const dirs = containerDirs(run);
	const prepared = prepareRun(dirs.dir, run.config, {
		clone: { source: repo },
		inside: () => containerPlace(run.rowId),
	});
	mkdirSync(dirs.piHome, { recursive: true });
	const argv = containerRunArgs({
		engine: "podman",
		image,
		network: "none",
		env: [],
		storeDir: run.storeDir,
		rowId: run.rowId,
		runId: run.runId,
		mounts: {
			pkg: PACKAGE_ROOT,
			run: prepared.runDir,
			session: join(dirs.store, "sessions", run.rowId),
			piHome: dirs.piHome,
			workspace: prepared.worktree,
			objects: prepared.objects,
		},
		uid: 0,
		gid: 0,
		command: ["sleep", "600"],
	});
	await engineRun("podman", argv);
}

describe("container engine work", () => {
	it("snapshots inside containers and fetches with upload-pack: the agent's .git config, hooks and filters never run here", async (ctx) => {
		requires(ctx, "podman", missing);
		const run = containerRun("hostile");
		await startSleeper(run);
		const work = containerDirs(run).work;
		// What an agent can write in its workspace: a trap that says where it ran.
		const trap = join(work, ".git", "trap.sh");
		writeFileSync(
			trap,
			`#!/bin/sh\nif [ -d "${hostMarks}" ]; then echo "$1" >> "${hostMarks}/ran-here"; else echo "$1" >> .git/ran-inside; fi\ncase "$1" in clean|smudge) exec cat ;; esac\nexit 0\n`,
		);
		chmodSync(trap, 0o755);
		const config = join(work, ".git", "config");
		writeFileSync(
			config,
			`${readFileSync(config, "utf8")}[core]\n\tfsmonitor = .git/trap.sh fsmonitor\n\talternateRefsCommand = .git/trap.sh alternate-refs\n\tsshCommand = .git/trap.sh ssh\n[filter "trap"]\n\tclean = .git/trap.sh clean\n\tsmudge = .git/trap.sh smudge\n[uploadpack]\n\tpackObjectsHook = .git/trap.sh pack-objects\n`,
		);
		for (const hook of [
			"post-checkout",
			"pre-commit",
			"reference-transaction",
			"post-index-change",
			"pre-auto-gc",
			"post-merge",
		]) {
			writeFileSync(join(work, ".git", "hooks", hook), `#!/bin/sh\nexec ${trap} ${hook}\n`);
			chmodSync(join(work, ".git", "hooks", hook), 0o755);
		}
		writeFileSync(join(work, ".gitattributes"), "* filter=trap\n");
		writeFileSync(join(work, "src.txt"), "two\n");
		writeFileSync(join(work, "new file.txt"), "untracked\n");

		expect(await alive(run)).toBe(true);
		const live = await snapshot(run); // engine exec into the running container
		expect(readFileSync(join(work, ".git", "ran-inside"), "utf8")).toMatch(/clean|fsmonitor/);
		rmSync(join(work, "README.md"));
		spawnSync("podman", ["rm", "-f", containerName(run.runId)], { stdio: "ignore" });
		expect(await alive(run)).toBe(false);
		const fetched = await fetchWork(run); // a one-shot container, then git fetch
		expect(fetched?.wip).not.toBe(live?.wip);

		// The local mirror worktree shows exactly what the workspace shows.
		const mirror = join(store, "worktrees", run.rowId);
		git(repo, "worktree", "add", "-q", "-b", `agent-board/${run.rowId}`, mirror, base);
		await layOver({ worktree: mirror, rowId: run.rowId });
		const far = farTree(work);
		expect(Object.keys(far).sort()).toEqual([".gitattributes", "new file.txt", "src.txt"]);
		expect(farTree(mirror)).toEqual(far);
		expect(existsSync(join(hostMarks, "ran-here"))).toBe(false);

		// The trap is armed for this side too: git porcelain here (what we never do) springs it.
		spawnSync("git", ["status", "--porcelain"], { cwd: work, stdio: "ignore" });
		expect(readFileSync(join(hostMarks, "ran-here"), "utf8")).toMatch(/fsmonitor|clean/);
		rmSync(join(hostMarks, "ran-here"));

		// A .git the agent replaced by a link to another repository is not fetched from.
		rmSync(join(work, ".git"), { recursive: true, force: true });
		spawnSync("ln", ["-s", join(repo, ".git"), join(work, ".git")]);
		await expect(fetchWork(run)).rejects.toThrow(/is not a directory any more/);
	});

	it("reconcile removes the container whose starter was SIGKILLed and whose run cannot resume; a live one is untouched", async (ctx) => {
		requires(ctx, "podman", missing);
		const starters: ChildProcess[] = [];
		// A store of its own: reconcile sees only these two.
		const own = join(store, "reconcile store");
		const runs = [containerRun("owned", own), containerRun("orphan", own)];
		for (const run of runs) {
			await startSleeper(run);
			// A stand-in for the link: it records itself as the run's owner and lives on.
			const child = spawn(
				process.execPath,
				[
					"-e",
					`require("fs").writeFileSync(${JSON.stringify(join(containerDirs(run).run, "runner.json"))}, JSON.stringify({ pid: process.pid, start: require("fs").readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ")[19] })); setInterval(() => {}, 1e6);`,
				],
				{ stdio: "ignore" },
			);
			starters.push(child);
		}
		const ownerAlive = (runId: string): boolean => {
			const run = runs.find((r) => r.runId === runId);
			const owner = run ? readProcessFile(join(containerDirs(run).run, "runner.json")) : undefined;
			return !!owner && isAlive(owner.pid, owner.start);
		};
		await waitFor(() => runs.every((r) => ownerAlive(r.runId)), "both owners recorded");
		starters[1]?.kill("SIGKILL");
		await waitFor(() => !ownerAlive(runs[1]?.runId ?? ""), "the SIGKILLed owner to be gone");
		// The caller says which runs are live: here, a run whose owner is dead cannot be resumed.
		const result = await reconcile(own, runs[0]!.target as ContainerRun["target"], (_row, runId) =>
			ownerAlive(runId),
		);
		expect(result).toEqual({ removed: [containerName(runs[1]!.runId)] });
		expect(containersOfStore(own)).toEqual([containerName(runs[0]!.runId)]);
		expect(await alive(runs[0]!)).toBe(true);
		starters[0]?.kill("SIGKILL");
		expect((await reconcile(own, runs[0]!.target as ContainerRun["target"], () => false)).removed).toEqual([
			containerName(runs[0]!.runId),
		]);
		expect(containersOfStore(own)).toEqual([]);
	});

	it("a container killed from outside ends with a reason; a full disk under the workspace fails the snapshot with disk-full", async (ctx) => {
		requires(ctx, "podman", missing);
		requires(ctx, "root (mounts a small tmpfs)", notRoot());
		const killed = containerRun("killed");
		await startSleeper(killed);
		const waiter = wait(killed);
		spawnSync("podman", ["kill", containerName(killed.runId)], { stdio: "ignore" });
		const { code } = await waiter.done;
		expect(endReason(code, killed.target)).toMatch(/^its container (was killed \(exit 137|is gone)/);

		const small = join(store, "small disk");
		mkdirSync(small);
		const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", small], { encoding: "utf8" });
		requires(ctx, "mount -t tmpfs", mounted.status === 0 ? undefined : mounted.stderr.trim());
		try {
			const full = containerRun("full", small);
			await startSleeper(full);
			spawnSync("dd", ["if=/dev/urandom", `of=${join(containerDirs(full).work, "filler")}`, "bs=64k", "count=100"], {
				stdio: "ignore",
			});
			const error = await snapshot(full).catch((e: unknown) => e);
			expect(error).toBeInstanceOf(EngineError);
			expect(error).toMatchObject({ code: "disk-full" });
			expect(String((error as Error).message)).toMatch(/no space left on the disk that holds it: free some space/);
			spawnSync("podman", ["rm", "-f", containerName(full.runId)], { stdio: "ignore" });
		} finally {
			spawnSync("umount", ["-l", small]);
		}
	});
});

describe("targets check for a container target", () => {
	let server: Server;
	let url: string;
	beforeAll(async () => {
		if (missing) return;
		server = createServer((_req, res) => res.writeHead(404).end());
		await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
		url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
	});
	afterAll(() => server?.close());

	const lines = (items: { name: string; ok: boolean; detail: string; fix?: string }[]): string[] =>
		items.map((i) => `${i.ok ? "ok" : "FAIL"} ${i.name}: ${i.detail}${i.fix ? ` -> ${i.fix}` : ""}`);

	it("says what is wrong and how to fix it: no network, image missing, image without pi and git, no engine, remote engine", async (ctx) => {
		requires(ctx, "podman", missing);
		const none = await checkContainerTarget({ engine: "podman", image, network: "none" }, { baseUrl: url });
		expect(none.items.find((i) => i.name === "network")).toMatchObject({
			ok: false,
			detail: expect.stringContaining(`the model provider ${url} cannot be reached from --network none`),
			fix: expect.stringContaining("--network none has no network at all"),
		});

		const absent = await checkContainerTarget({ engine: "podman", image: "localhost/pab-no-such-image:1" });
		expect(lines(absent.items)[1]).toMatch(
			/^FAIL image: the image localhost\/pab-no-such-image:1 is not on podman's machine \(the board never pulls\) \(podman: .*image not known\) -> build it from the package's Dockerfile: podman build -t localhost\/pab-no-such-image:1 - < \/.*docker\/worker\.Dockerfile$/,
		);

		const bare = await ensureImageWithout(image, ["/usr/local/bin/pi", "/usr/bin/git"], "nopi");
		const noPi = await checkContainerTarget({ engine: "podman", image: bare, network: "none" });
		expect(noPi.items.filter((i) => !i.ok).map((i) => `${i.name}: ${i.detail}`)).toEqual([
			"pi: pi: not found on the image's PATH",
			"git: git: not found on the image's PATH",
		]);
		expect(noPi.items.find((i) => i.name === "pi")?.fix).toMatch(
			/node >= 22\.19, pi 1\.6, bash and git: build it from the package's Dockerfile/,
		);

		const path = process.env.PATH;
		process.env.PATH = mkdtempSync(join(tmpdir(), "pab-empty-path-"));
		try {
			const noEngine = await checkContainerTarget({ engine: "podman", image });
			expect(lines(noEngine.items)).toEqual([
				"FAIL engine: podman is not installed or not on PATH -> install podman (apt-get install podman), or choose the other engine with --container",
			]);
		} finally {
			process.env.PATH = path;
		}
		const down = await engineRun("podman", [
			"--remote",
			"--url",
			`unix://${join(store, "no engine.sock")}`,
			"info",
		]).catch((e: unknown) => e);
		expect(down).toMatchObject({
			code: "engine-down",
			message: expect.stringMatching(/^podman cannot reach its engine: start its service/),
		});

		const remote = await checkContainerTarget({ engine: "docker", image, engineHost: "ssh://me@box" });
		expect(lines(remote.items)).toEqual([
			expect.stringMatching(
				/^FAIL engine host: ssh:\/\/me@box: a remote engine \(--engine-host\) cannot mount this machine's run dirs: its runs go through its station container.* -> check and run it as a target/,
			),
		]);
	});
});
