/**
 * Fleet code under a burst: what many runs of one host do at the same moment. A row's base asked for
 * twice in one joined push, the rows of a burst sharing their base in one joined fetch-back, and two
 * launches of one run meeting at the host (a relink's while the first runner is still starting), and a
 * run's link deaths counted by the relink while its link says it reached the far run, and a pool's run
 * going back to the queue while a pump may place it again.
 */
import { execFileSync } from "node:child_process";
import {
	chmodSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { launchNeeds, launchRun } from "../runner/far/far-launch.mjs";
import { MAX_RELINKS, relink, relinkable, resetRelinks } from "../runner/life/relink.mjs";
import { initialStatus } from "../runner/life/state-rules.mjs";
import { returnToPool } from "../runner/life/pool-return.mjs";
import { queueDir, queuedEntryName } from "../runner/life/queue.mjs";
import { slotOfRun, slotsOf } from "../runner/life/slots.mjs";
import { linkPaths } from "../runner/life/target-link-owner.mjs";
import { readProcessFile } from "../runner/store/safe-read.mjs";
import { ensureMirror } from "../runner/far/git-workspace.mjs";
import { gitLane } from "../runner/link/git-lane.mjs";
import { pushBase, repoKey } from "../runner/link/git-travel.mjs";
import { endRunProcesses, processStartTime, runTag } from "../runner/store/proc.mjs";
import { git, initRepo } from "../test-support/git-repo.ts";
import { storeRunners } from "../test-support/proc-scan.ts";

const dirs: string[] = [];
function scratch(): string {
	const dir = mkdtempSync(join(tmpdir(), "pab-races-"));
	dirs.push(dir);
	return dir;
}
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

describe("code travel for a burst, joined", () => {
	it("a row's base asked for again while its first push waits (a relaunch after the channel dropped) joins the push once", async () => {
		const dir = scratch();
		const repo = initRepo(join(dir, "local"), { "a.txt": "a\n" });
		const mirror = join(dir, "mirror.git");
		ensureMirror(mirror);
		const lane = gitLane(1);
		const base = git(repo, "rev-parse", "HEAD");
		const remote = { url: mirror };
		// The first goes alone; the rest wait together, row1 twice (git refuses one ref named twice in a push).
		const pushes = ["row0", "row1", "row2", "row1"].map((rowId) => lane.push({ repo, remote, rowId, commit: base }));
		const outcomes = await Promise.allSettled(pushes);
		expect(outcomes.filter((outcome) => outcome.status === "rejected")).toEqual([]);
		for (const rowId of ["row0", "row1", "row2"])
			expect(git(mirror, "rev-parse", `refs/agent-board/base/${rowId}`)).toBe(base);
	});

	it("joins the fetch-backs that wait into one git fetch when their rows share a base (a burst's)", async () => {
		const dir = scratch();
		const repo = initRepo(join(dir, "local"), { "a.txt": "a\n" });
		const far = join(dir, "far.git");
		execFileSync("git", ["clone", "-q", "--bare", repo, far]);
		const base = git(repo, "rev-parse", "HEAD");
		for (const rowId of ["row0", "row1", "row2"]) {
			git(far, "update-ref", `refs/heads/agent-board/${rowId}`, base);
			git(far, "update-ref", `refs/agent-board/wip/${rowId}`, base);
		}
		// Every upload-pack the fetches start is counted (git's trace of its built-ins).
		const trace = join(dir, "trace");
		const lane = gitLane(1);
		const landing = join(dir, "landing.git");
		const remote = { url: far, env: { GIT_TRACE: trace } };
		const got = await Promise.all(
			["row0", "row1", "row2"].map((rowId) => lane.fetch({ repo, remote, rowId, landing, base })),
		);
		expect(got).toEqual(Array.from({ length: 3 }, () => ({ head: base, wip: base })));
		// The first went alone; the two that waited went together (each alone again only when the join fails).
		expect(
			readFileSync(trace, "utf8")
				.split("\n")
				.filter((line) => line.includes("built-in: git upload-pack")),
		).toHaveLength(2);
	});
});

describe("host-agent link: two launches of one run meet", () => {
	it("start its runner once (a relink's launch while the first one's runner is still starting, before it records itself)", async () => {
		const dir = scratch();
		const repo = initRepo(join(dir, "local"), { "a.txt": "a\n" });
		const far = join(dir, "far");
		const key = repoKey(repo);
		const base = git(repo, "rev-parse", "HEAD");
		const mirror = join(far, "repos", `${key}.git`);
		ensureMirror(mirror);
		pushBase({ repo, remote: { url: mirror }, rowId: "row1", commit: base });
		// A worker that only waits: the runner stays until the test ends it.
		const pi = join(dir, "pi");
		writeFileSync(pi, "#!/bin/sh\nsleep 30\n");
		chmodSync(pi, 0o755);
		const config = {
			rowId: "row1",
			runId: "run1",
			repoKey: key,
			base,
			prompt: "p",
			env: {},
			createdAt: Date.now(),
			session: null,
			piCommand: [pi],
		};
		try {
			await Promise.all([launchRun(far, config), launchRun(far, config)]);
			// A spawn returns once its child has exec'd: every runner these launches started is there now.
			expect(storeRunners(join(far, "store"))).toHaveLength(1);
			expect(await launchNeeds(far, { ...config, piCommand: [process.execPath] })).toMatchObject({ started: true });
		} finally {
			await endRunProcesses(runTag("run1", "target"), { graceMs: 200 });
		}
	});
});

describe("a run's link deaths, counted with one writer", () => {
	it("a relink counts in its file, a link that reached its far run says so in its own, and the count starts afresh from there", () => {
		const store = scratch();
		const runDir = join(store, "rows", "row1", "runs", "run-1");
		mkdirSync(runDir, { recursive: true });
		writeFileSync(join(runDir, "status.json"), JSON.stringify(initialStatus("run-1", "row1", Date.now())));
		writeFileSync(join(runDir, "runner.json"), JSON.stringify({ pid: 1, start: "0" }));
		// The "link" each relink starts: a process that lives a while and does nothing.
		const fakeNode = join(store, "fake-node");
		writeFileSync(fakeNode, "#!/bin/sh\nexec sleep 30\n");
		chmodSync(fakeNode, 0o755);
		const spawnWith = { node: fakeNode, env: process.env };
		try {
			for (let i = 0; i < MAX_RELINKS; i++) expect(relink(store, runDir, "far", spawnWith)).toBe(true);
			// Links that keep dying before they follow anything: given up.
			expect(relinkable(runDir)).toBe(false);
			expect(relink(store, runDir, "far", spawnWith)).toBe(false);
			const counted = readFileSync(join(runDir, "link-respawns.json"), "utf8");
			resetRelinks(runDir);
			// The link's word is its own file; the relink's count is untouched, and read as started afresh.
			expect(readFileSync(join(runDir, "link-respawns.json"), "utf8")).toBe(counted);
			expect(relinkable(runDir)).toBe(true);
			expect(relink(store, runDir, "far", spawnWith)).toBe(true);
			expect(JSON.parse(readFileSync(join(runDir, "link-respawns.json"), "utf8")).count).toBe(1);
		} finally {
			const link = readProcessFile(linkPaths(store, "far").record);
			if (link) process.kill(link.pid, "SIGKILL");
		}
	});
});

describe("a pool's run that goes back to the queue", () => {
	it("frees its pool slot before it is queued, and leaves the owner record of a link that has it now", () => {
		const store = scratch();
		const runDir = join(store, "rows", "row1", "runs", "run-1");
		mkdirSync(runDir, { recursive: true });
		const me = { pid: process.pid, start: processStartTime(process.pid) ?? "" };
		const poolSlots = slotsOf(store, "build").dir;
		mkdirSync(poolSlots, { recursive: true });
		writeFileSync(join(poolSlots, "slot-0.json"), JSON.stringify({ ...me, runId: "run-1", rowId: "row1" }));
		writeFileSync(join(runDir, "runner.json"), JSON.stringify(me));
		const back = {
			storeDir: store,
			runDir,
			rowId: "row1",
			runId: "run-1",
			createdAt: Date.now(),
			pool: "build",
			member: "a",
			members: ["a", "b"],
			reason: "unreachable",
		};
		expect(returnToPool(back)).toEqual({ requeued: true });
		// Queued with no pool slot held: the slot a pump claims for it next is the only one it has.
		expect(queuedEntryName(store, "run-1")).toBeTruthy();
		expect(slotOfRun(poolSlots, "run-1")).toBeUndefined();
		expect(existsSync(join(runDir, "runner.json"))).toBe(false);
		// Placed again on b and handed to b's link before a's link took its last step: b's record stays.
		writeFileSync(join(runDir, "runner.json"), JSON.stringify({ pid: 1, start: "0" }));
		rmSync(join(queueDir(store), readdirSync(queueDir(store))[0] ?? ""), { force: true });
		expect(returnToPool({ ...back, member: "c", members: ["a", "b", "c", "d"] })).toEqual({ requeued: true });
		expect(JSON.parse(readFileSync(join(runDir, "runner.json"), "utf8")).pid).toBe(1);
	});
});
