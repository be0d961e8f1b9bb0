/**
 * Fleets without a host: a pool as a kind of target (added, checked, refused, its limit), where the
 * queue places a pool's run (most free slots, then the far side's load, never an unreachable or
 * failing member), frames tagged by run, host-agent's one channel for many runs (host-agent `link`
 * over pipes; a launch whose pi check hangs holds no other run), the git lane joining a burst's pushes, pushes at once into a new mirror, and fetch-back through the landing repository
 * while worktrees are being created in the same repository.
 */
import { execFileSync, spawn } from "node:child_process";
import {
	appendFileSync,
	chmodSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	realpathSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { readBoardConfig, updateBoardConfig } from "../runner/life/board-config.mjs";
import { readCheck } from "../runner/life/target-health.mjs";
import { createBoardService } from "../src/board/engine/service.ts";
import "../test-support/fake-kind/register.mjs";
import { placementOrder, UNREACHABLE_HOLD_MS, type Candidate } from "../runner/life/placement.mjs";
import { encodeFrame, parseFrame, readFrames, type Frame } from "../runner/far/frames.mjs";
import { serveLink } from "../runner/far/far-mux.mjs";
import { hostSnapshots } from "../runner/far/snapshot-lane.mjs";
import { prepareRun } from "../runner/far/far-run.mjs";
import { ensureMirror } from "../runner/far/git-workspace.mjs";
import { gitLane } from "../runner/link/git-lane.mjs";
import { fetchBack, pushBase, repoKey } from "../runner/link/git-travel.mjs";
import { targetError, targetFromInput } from "../runner/kinds/kinds.mjs";
import { processStartTime } from "../runner/store/proc.mjs";
import { git, initRepo } from "../test-support/git-repo.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import { waitFor } from "../test-support/wait.ts";

const dirs: string[] = [];
function scratch(): string {
	const dir = mkdtempSync(join(tmpdir(), "pab-fleet-"));
	dirs.push(dir);
	return dir;
}
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

const ssh = (host: string, max: number) => ({ kind: "ssh", host, dir: ".agent-board", max, env: [] as string[] });

describe("a pool of targets", () => {
	it("is added over existing targets, its limit their limits added up, and config.json refuses a pool of what is not there", async () => {
		const targets = { a: ssh("a", 3), b: ssh("b", 5) };
		expect(targetFromInput({ kind: "pool", members: "a, b" }, { targets })).toEqual({
			kind: "pool",
			members: ["a", "b"],
			max: 8,
			env: [],
		});
		expect(targetFromInput({ kind: "pool", members: "a,b", max: 4, env: ["X"] }, { targets })).toEqual({
			kind: "pool",
			members: ["a", "b"],
			max: 4,
			env: ["X"],
		});
		expect(() => targetFromInput({ kind: "pool", members: "a,c" }, { targets })).toThrow(
			"--pool: c is not a target (add it first)",
		);
		expect(() => targetFromInput({ kind: "pool", members: "a,local" }, { targets })).toThrow(
			'--pool: "local" is not a target\'s name',
		);
		expect(() => targetFromInput({ kind: "pool", members: "" }, { targets })).toThrow(
			"--pool takes the names of its targets",
		);
		const nested = { ...targets, p: { kind: "pool", members: ["a"], max: 3, env: [] } };
		expect(() => targetFromInput({ kind: "pool", members: "p,b" }, { targets: nested })).toThrow(
			"--pool: p is a pool itself",
		);
		expect(targetError({ kind: "pool", name: "p", members: [], max: 1, env: [] }, { named: true })).toBe(
			"/members must name at least one target",
		);

		const store = scratch();
		await updateBoardConfig(store, (c) => {
			Object.assign(c.targets, targets);
			c.targets.p = targetFromInput({ kind: "pool", members: "a,b" }, c);
		});
		expect(readBoardConfig(store).targets.p).toMatchObject({ members: ["a", "b"], max: 8 });
		// A hand edit that leaves the pool a member short is an error naming the file and field.
		const config = JSON.parse(readFileSync(join(store, "config.json"), "utf8"));
		delete config.targets.b;
		writeFileSync(join(store, "config.json"), JSON.stringify(config));
		expect(() => readBoardConfig(store)).toThrow(
			`${join(store, "config.json")}: /targets/p/members: b is not a target (add it first)`,
		);
	});

	it("is checked member by member, each member's result kept for placement", async () => {
		const root = scratch();
		const store = join(root, "store");
		const board = createBoardService({
			storeDir: store,
			piCommand: [process.execPath, "-e", ""],
			env: { ...process.env },
		});
		writeFileSync(join(root, "file"), "");
		await board.targets.add("a", { kind: "fake", dir: join(root, "far-a") });
		await board.targets.add("b", { kind: "fake", dir: join(root, "file", "far-b") });
		await board.targets.add("p", { kind: "pool", members: "a,b" });
		const checked = await board.targets.check("p");
		expect(checked.ok).toBe(false);
		expect(checked.items.map((item) => [item.name, item.ok])).toEqual([
			["a: dir", true],
			["b: dir", false],
		]);
		expect(readCheck(store, "a")).toMatchObject({ ok: true });
		expect(readCheck(store, "b")).toMatchObject({ ok: false });
		expect(readCheck(store, "p")).toBeUndefined();
		const views = await board.targets.list();
		expect(views.find((view) => view.name === "a")?.takes).toEqual({ ok: true });
		expect(views.find((view) => view.name === "b")?.takes?.ok).toBe(false);
	});

	it("places a run on the member with the most free slots, ties to the lowest load per core, never on one that is full, unreachable or failing", () => {
		const now = 1_000_000;
		const member = (name: string, max: number, live: number, extra: Partial<Candidate> = {}): Candidate => ({
			name,
			max,
			live,
			...extra,
		});
		const names = (list: Candidate[]) => list.map((m) => m.name);
		expect(names(placementOrder([member("a", 4, 3), member("b", 4, 1), member("c", 2, 0)], now))).toEqual([
			"b",
			"c",
			"a",
		]);
		// Equal room: the lower load per core first; a member never heard from after those that were; then the pool's order.
		const load = (value: number, cpus: number) => ({ health: { at: now, reachable: true, load: value, cpus } });
		expect(
			names(
				placementOrder(
					[member("a", 4, 2), member("b", 4, 2, load(3, 2)), member("c", 4, 2, load(2, 4)), member("d", 4, 2)],
					now,
				),
			),
		).toEqual(["c", "b", "a", "d"]);
		expect(names(placementOrder([member("full", 2, 2), member("ok", 2, 1)], now))).toEqual(["ok"]);
		const down = { health: { at: now - 1000, reachable: false, reason: "Connection refused" } };
		expect(names(placementOrder([member("down", 8, 0, down), member("ok", 2, 1)], now))).toEqual(["ok"]);
		// An old unreachable record keeps nothing out: the next run tries it (its link then says again).
		expect(
			names(
				placementOrder(
					[member("down", 8, 0, { health: { ...down.health, at: now - UNREACHABLE_HOLD_MS - 1 } })],
					now,
				),
			),
		).toEqual(["down"]);
		const failing = { check: { at: now - 10, ok: false, failing: "pi: not found" } };
		expect(names(placementOrder([member("bad", 8, 0, failing), member("ok", 2, 1)], now))).toEqual(["ok"]);
		// A link that reached it after the failed check: it takes runs again.
		expect(
			names(placementOrder([member("back", 8, 0, { ...failing, health: { at: now, reachable: true } })], now)),
		).toEqual(["back"]);
	});
});

describe("frames on one channel", () => {
	it("carry the run they are about; a bad run id drops the frame", () => {
		const frames: Frame[] = [
			{ t: "follow", row: "r1", seq: 3, bytes: 10, run: "run-1" },
			{ t: "launch", config: { rowId: "r1" }, run: "run-1" },
			{ t: "stop", row: "r1", run: "run-1" },
			{ t: "unfollow", run: "run-1" },
			{ t: "close", kind: "remote", message: "pi not found", run: "run-1" },
			{ t: "stat", load: 0.5, cpus: 2, at: 5 },
			{ t: "hello", agent: "0.1.0", pid: 9, load: 1.25, cpus: 4 },
			{ t: "event", seq: 1, line: "{}", run: "run-2" },
		];
		for (const frame of frames) expect(parseFrame(encodeFrame(frame).trimEnd())).toEqual(frame);
		expect(parseFrame(JSON.stringify({ t: "event", seq: 1, line: "{}", run: "../x" }))).toBeUndefined();
		expect(parseFrame(JSON.stringify({ t: "follow", row: "../r", seq: 1, bytes: 0, run: "a" }))).toBeUndefined();
		expect(parseFrame(JSON.stringify({ t: "stat", load: -1, cpus: 2, at: 1 }))).toBeUndefined();
	});
});

/** A far run prepared in `dir` whose "runner" is this test process; its files as a runner would write them. */
function farRun(dir: string, repo: string, rowId: string, runId: string) {
	const key = repoKey(repo);
	const base = git(repo, "rev-parse", "HEAD");
	ensureMirror(join(dir, "repos", `${key}.git`));
	pushBase({ repo, remote: { url: join(dir, "repos", `${key}.git`) }, rowId, commit: base });
	const prepared = prepareRun(dir, {
		rowId,
		runId,
		repoKey: key,
		base,
		prompt: "p",
		env: {},
		createdAt: Date.now(),
		session: null,
	});
	writeFileSync(
		join(prepared.runDir, "runner.json"),
		JSON.stringify({ pid: process.pid, start: processStartTime(process.pid) }),
	);
	writeFileSync(
		join(prepared.runDir, "events.jsonl"),
		[1, 2].map((seq) => JSON.stringify({ seq, at: 1, type: "message_update", delta: `${runId}-${seq}` })).join("\n") +
			"\n",
	);
	return prepared;
}

describe("host-agent link: every run on one channel", () => {
	it("follows two runs at once from their own resume points, tags each frame, delivers an inbox message to its run only, and stops one", async () => {
		const dir = scratch();
		const repo = initRepo(join(dir, "local"), { "a.txt": "a\n" });
		const far = join(dir, "far");
		const one = farRun(far, repo, "row1", "run1");
		const two = farRun(far, repo, "row2", "run2");
		const input = new PassThrough();
		const output = new PassThrough();
		const got: Frame[] = [];
		readFrames(output, (frame) => got.push(frame));
		let ended = false;
		serveLink(far, { agent: "test", input, output, onEnd: () => (ended = true) });
		const send = (frame: Frame) => input.write(encodeFrame(frame));
		send({ t: "follow", row: "row1", seq: 0, bytes: 0, run: "run1" });
		send({ t: "follow", row: "row2", seq: 1, bytes: 0, run: "run2" });
		await waitFor(() => got.filter((f) => f.t === "event").length === 3, "both runs' events");
		expect(got[0]).toMatchObject({ t: "hello", agent: "test", cpus: expect.any(Number) });
		const events = got.filter((f) => f.t === "event").map((f) => [f.run, f.t === "event" ? f.seq : 0]);
		expect(events.sort()).toEqual([
			["run1", 1],
			["run1", 2],
			["run2", 2],
		]);
		send({ t: "inbox", message: { id: "m1", kind: "message", text: "only for run2", at: 1 }, run: "run2" });
		await waitFor(() => readdirOrEmpty(join(two.runDir, "inbox")).length === 1, "the message in run2's inbox");
		expect(readdirOrEmpty(join(one.runDir, "inbox"))).toEqual([]);
		// Appended to run1 only: the stream says which run.
		appendFileSync(
			join(one.runDir, "events.jsonl"),
			`${JSON.stringify({ seq: 3, at: 2, type: "message_update" })}\n`,
		);
		await waitFor(() => got.some((f) => f.t === "event" && f.seq === 3), "run1's next event");
		expect(got.find((f) => f.t === "event" && f.seq === 3)?.run).toBe("run1");
		// A stop for run2 over the same channel: its "runner" (this process) is not signalled, its end is recorded.
		writeFileSync(join(two.runDir, "runner.json"), JSON.stringify({ pid: 999_999_999, start: "0" }));
		send({ t: "stop", row: "row2", run: "run2" });
		await waitFor(
			() => got.some((f) => f.t === "result" && f.run === "run2" && f.value.stopped === true),
			"run2's stop",
		);
		await waitFor(() => got.some((f) => f.t === "end" && f.run === "run2"), "run2's end on the stream");
		expect(got.some((f) => f.t === "end" && f.run === "run1")).toBe(false);
		// A launch the host refuses closes that run only, in the host's words.
		send({ t: "launch", config: { rowId: "row3", runId: "run3" }, run: "run3" });
		await waitFor(() => got.some((f) => f.t === "close" && f.run === "run3"), "run3 refused");
		expect(got.find((f) => f.t === "close")).toMatchObject({
			kind: "remote",
			message: expect.stringContaining("bad run config"),
		});
		input.end();
		await waitFor(() => ended, "the channel to end with its input");
	});
});

describe("host-agent link: a launch that waits at the host", () => {
	it("holds no other run: while one run's pi --version hangs, another run's frames and a stop go through; a launch given up starts nothing; a wrong pi closes with start-failed", async () => {
		const dir = scratch();
		const repo = initRepo(join(dir, "local"), { "a.txt": "a\n" });
		const far = join(dir, "far");
		const one = farRun(far, repo, "row1", "run1");
		const key = repoKey(repo);
		const base = git(repo, "rev-parse", "HEAD");
		// A pi whose --version answers only once the test says so; and one of another series.
		const release = join(dir, "release");
		const stuck = join(dir, "pi-stuck");
		writeFileSync(stuck, `#!/bin/sh\nwhile [ ! -e ${release} ]; do sleep 0.05; done\necho 1.6.0\n`);
		chmodSync(stuck, 0o755);
		const old = join(dir, "pi-old");
		writeFileSync(old, "#!/bin/sh\necho 0.1.0\n");
		chmodSync(old, 0o755);
		const input = new PassThrough();
		const output = new PassThrough();
		const got: Frame[] = [];
		readFrames(output, (frame) => got.push(frame));
		serveLink(far, { agent: "test", input, output, onEnd: () => undefined });
		const send = (frame: Frame) => input.write(encodeFrame(frame));
		const config = (runId: string, pi: string) => ({
			rowId: runId.replace("run", "row"),
			runId,
			repoKey: key,
			base,
			prompt: "p",
			env: {},
			createdAt: Date.now(),
			session: null,
			piCommand: [pi],
		});
		send({ t: "launch", config: config("run3", stuck), run: "run3" });
		await waitFor(
			() => execFileSync("ps", ["-eo", "args"], { encoding: "utf8" }).includes(stuck) || undefined,
			"the launch's pi --version to hang",
		);
		send({ t: "follow", row: "row1", seq: 0, bytes: 0, run: "run1" });
		await waitFor(
			() => got.filter((f) => f.t === "event" && f.run === "run1").length === 2,
			"run1's events while run3's launch waits",
		);
		writeFileSync(join(one.runDir, "runner.json"), JSON.stringify({ pid: 999_999_999, start: "0" }));
		send({ t: "stop", row: "row1", run: "run1" });
		await waitFor(
			() => got.some((f) => f.t === "result" && f.run === "run1" && f.value.stopped === true),
			"run1's stop while run3's launch waits",
		);
		// The link gives run3 up; its pi then answers: nothing is said of it, nothing started.
		send({ t: "unfollow", run: "run3" });
		writeFileSync(release, "");
		send({ t: "launch", config: config("run4", old), run: "run4" });
		await waitFor(() => got.some((f) => f.t === "close" && f.run === "run4"), "run4 refused");
		await waitFor(
			() => !execFileSync("ps", ["-eo", "args"], { encoding: "utf8" }).includes(stuck) || undefined,
			"run3's pi to answer",
		);
		await new Promise((resolve) => setTimeout(resolve, 200));
		expect(got.find((f) => f.t === "close" && f.run === "run4")).toMatchObject({
			kind: "remote",
			code: "start-failed",
			message: expect.stringContaining("is pi 0.1.0"),
		});
		expect(got.some((f) => f.run === "run3")).toBe(false);
		expect(readdirOrEmpty(join(far, "store", "rows", "row3"))).toEqual([]);
		input.end();
	});
});

describe("host-agent link: a slow snapshot", () => {
	it("holds no other run's events: while one row's workspace snapshot waits in git, another row's event goes out; the tool calls meanwhile make one snapshot after it", async () => {
		const dir = scratch();
		const repo = initRepo(join(dir, "local"), { "a.txt": "a\n" });
		const far = join(dir, "far");
		const one = farRun(far, repo, "row1", "run1");
		const two = farRun(far, repo, "row2", "run2");
		const work1 = realpathSync(join(far, "work", "row1"));
		// A git that, once `hold` exists, waits in row1's `git add` for `release` (or gives up after 10 s,
		// so a follow that blocks on it fails this test rather than hanging it), counting those adds.
		const bin = join(dir, "bin");
		mkdirSync(bin);
		const [hold, entered, release, adds] = [
			join(dir, "hold"),
			join(dir, "entered"),
			join(dir, "release"),
			join(dir, "adds"),
		] as const;
		const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
		writeFileSync(
			join(bin, "git"),
			`#!/bin/sh\ncase "$(pwd -P)" in "${work1}"*) if [ -e "${hold}" ] && [ "$1" = add ]; then echo add >> "${adds}"; : > "${entered}"; n=0; while [ ! -e "${release}" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done; fi;; esac\nexec "${realGit}" "$@"\n`,
		);
		chmodSync(join(bin, "git"), 0o755);
		const path = process.env.PATH;
		process.env.PATH = `${bin}:${path}`;
		try {
			const input = new PassThrough();
			const output = new PassThrough();
			const got: Frame[] = [];
			readFrames(output, (frame) => got.push(frame));
			serveLink(far, { agent: "test", input, output, onEnd: () => undefined });
			const send = (frame: Frame) => input.write(encodeFrame(frame));
			const gits = (run: string) => got.filter((f) => f.t === "git" && f.run === run);
			const event = (run: string, seq: number) =>
				got.findIndex((f) => f.t === "event" && f.run === run && f.seq === seq);
			const append = (runDir: string, seq: number, type: string) =>
				appendFileSync(join(runDir, "events.jsonl"), `${JSON.stringify({ seq, at: 2, type })}\n`);
			send({ t: "follow", row: "row1", seq: 0, bytes: 0, run: "run1" });
			send({ t: "follow", row: "row2", seq: 0, bytes: 0, run: "run2" });
			await waitFor(() => gits("run1").length === 1 && gits("run2").length === 1, "both rows' first snapshots");

			writeFileSync(hold, "");
			writeFileSync(join(work1, "b.txt"), "b\n");
			append(one.runDir, 3, "tool_execution_end");
			await waitFor(() => existsSync(entered), "row1's snapshot to wait in git add");
			append(two.runDir, 3, "message_update");
			await waitFor(() => event("run2", 3) >= 0, "row2's event while row1's snapshot waits");
			expect(gits("run1")).toHaveLength(1);
			expect(event("run1", 3)).toBeGreaterThanOrEqual(0);
			// Three more tool calls of row1 while its snapshot waits: one more snapshot after it, not three.
			writeFileSync(join(work1, "c.txt"), "c\n");
			for (const seq of [4, 5, 6]) {
				append(one.runDir, seq, "tool_execution_end");
				await waitFor(() => event("run1", seq) >= 0, `row1's event ${seq}`);
			}
			writeFileSync(release, "");
			await waitFor(() => gits("run1").length === 2, "row1's held snapshot");
			const lines = () => readFileSync(adds, "utf8").trim().split("\n").length;
			await waitFor(() => lines() >= 2 && hostSnapshots.running === 0, "row1's one snapshot after it");
			expect(lines()).toBe(2);
			const wip = gits("run1")[1];
			expect(git(work1, "ls-tree", "--name-only", wip?.t === "git" ? wip.wip : "").split("\n")).toEqual([
				"a.txt",
				"b.txt",
				"c.txt",
			]);
			input.end();
		} finally {
			process.env.PATH = path;
		}
	});
});

function readdirOrEmpty(path: string): string[] {
	try {
		return readdirSync(path);
	} catch {
		return [];
	}
}

describe("code travel for a burst", () => {
	it("runs started at once into one repository each make their worktree (git worktree add one at a time)", async () => {
		const root = scratch();
		const repo = initRepo(join(root, "repo"), { "a.txt": "a\n" });
		const board = createBoardService({
			storeDir: join(root, "store"),
			piCommand: [process.execPath, "-e", ""],
			maxConcurrent: 12,
			env: { ...process.env },
		});
		const rows = (
			await Promise.all(
				Array.from({ length: 4 }, (_, i) =>
					board.dispatchAttempts({ prompt: `AT ONCE ${i}`, cwd: repo, count: 3 }),
				),
			)
		).flat();
		expect(rows).toHaveLength(12);
		// Twelve runners, each making its row's worktree as it starts, under the store's worktree lock.
		for (const row of rows) await waitDone(board, row.id, 60_000);
		const made = git(repo, "worktree", "list", "--porcelain")
			.split("\n")
			.filter((line) => line.startsWith("worktree "))
			.map((line) => line.slice("worktree ".length));
		expect(made.slice(1).sort()).toEqual(rows.map((row) => realpathSync(row.worktreePath ?? "")).sort());
		for (const row of rows) expect(existsSync(join(row.worktreePath ?? "", "a.txt"))).toBe(true);
	});

	it("joins the base pushes that wait into one git push, in at most the lane's transfers at a time", async () => {
		const dir = scratch();
		const repo = initRepo(join(dir, "local"), { "a.txt": "a\n" });
		const mirror = join(dir, "mirror.git");
		ensureMirror(mirror);
		// Every receive-pack the pushes start is counted.
		const count = join(dir, "receive-packs");
		const wrapper = join(dir, "receive-pack.sh");
		writeFileSync(wrapper, `#!/bin/sh\necho x >> '${count}'\nexec git-receive-pack "$@"\n`);
		chmodSync(wrapper, 0o755);
		const lane = gitLane(1);
		const base = git(repo, "rev-parse", "HEAD");
		const remote = { url: mirror, receivePack: wrapper };
		await Promise.all(
			Array.from({ length: 6 }, (_, i) => lane.push({ repo, remote, rowId: `row${i}`, commit: base })),
		);
		for (let i = 0; i < 6; i++) expect(git(mirror, "rev-parse", `refs/agent-board/base/row${i}`)).toBe(base);
		// The first went alone (nothing waited yet); the five that waited went together.
		expect(readFileSync(count, "utf8").trim().split("\n")).toHaveLength(2);
	});

	it("pushes at once into a host's new mirror all land (host-agent receive-pack), as do fetch-backs at once into a new landing, and a push that cannot tells git why", async () => {
		const dir = scratch();
		const repo = initRepo(join(dir, "local"), { "a.txt": "a\n" });
		const agent = join(process.cwd(), "runner", "far", "host-agent.mjs");
		const receivePack = `node ${agent} receive-pack`;
		const push = (mirror: string, branch: string) =>
			new Promise<{ code: number | null; stderr: string }>((resolvePush) => {
				const child = spawn(
					"git",
					["push", "-q", `--receive-pack=${receivePack}`, mirror, `HEAD:refs/heads/${branch}`],
					{ cwd: repo, stdio: ["ignore", "ignore", "pipe"] },
				);
				let stderr = "";
				child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
				child.on("exit", (code) => resolvePush({ code, stderr }));
			});
		// A new host: every push of a burst finds no mirror, and two `git init` at one path fail on each other.
		for (let round = 0; round < 4; round++) {
			const mirror = join(dir, `far${round}`, "repos", "r.git");
			const results = await Promise.all(Array.from({ length: 4 }, (_, i) => push(mirror, `b${i}`)));
			expect(results.filter((result) => result.code !== 0).map((result) => result.stderr)).toEqual([]);
			for (let i = 0; i < 4; i++)
				expect(git(mirror, "rev-parse", `refs/heads/b${i}`)).toBe(git(repo, "rev-parse", "HEAD"));
		}
		// Two links' fetch-backs at once into a repository's new landing: both make it, settings and all.
		const landing = join(dir, "store", "targets", ".landing", "r.git");
		const script = `import { ensureLanding } from ${JSON.stringify(join(process.cwd(), "runner", "link", "landing.mjs"))}; ensureLanding(process.argv[1]);`;
		const makers = Array.from(
			{ length: 4 },
			() =>
				new Promise<number | null>((done) =>
					spawn(process.execPath, ["--input-type=module", "-e", script, landing], { stdio: "inherit" }).on(
						"exit",
						done,
					),
				),
		);
		expect(await Promise.all(makers)).toEqual([0, 0, 0, 0]);
		expect(git(landing, "config", "gc.auto")).toBe("0");
		// Its cause reaches the pusher on stderr (git shows it), not as a frame on git's protocol.
		writeFileSync(join(dir, "file"), "not a directory");
		const refused = await push(join(dir, "file", "r.git"), "b");
		expect(refused.code).not.toBe(0);
		expect(refused.stderr).toContain(`host-agent: EEXIST: file already exists, mkdir '${join(dir, "file")}'`);
		expect(refused.stderr).not.toContain("bad line length");
	});

	// Up to 12 rounds of git under a burst of 400 worktree adds: on a loaded machine that is more than the
	// default minute (a hang guard, not a timing assert).
	it("fetches back through the landing repository while worktrees are being created in the user's repository", {
		timeout: 240_000,
	}, async () => {
		const dir = scratch();
		const repo = initRepo(join(dir, "local"), { "a.txt": "a\n" });
		const far = join(dir, "far.git");
		execFileSync("git", ["clone", "-q", "--bare", repo, far]);
		const landing = join(dir, "landing.git");
		const base = git(repo, "rev-parse", "HEAD");
		// A dispatch burst meanwhile: worktrees added one after another in the same repository.
		const adder = spawn(
			"sh",
			["-c", `i=0; while [ $i -lt 400 ]; do git worktree add -q ../wt$i -b b$i HEAD 2>/dev/null; i=$((i+1)); done`],
			{ cwd: repo, stdio: "ignore" },
		);
		let adding = true;
		adder.on("exit", () => (adding = false));
		const failures: string[] = [];
		let round = 0;
		try {
			while (adding && round < 12) {
				round += 1;
				// New objects each round: the fetch must check them against every ref the repository has.
				const tree = git(far, "rev-parse", "HEAD^{tree}");
				const commit = execFileSync("git", ["commit-tree", tree, "-p", "HEAD", "-m", `round ${round}`], {
					cwd: far,
					encoding: "utf8",
					env: {
						...process.env,
						GIT_AUTHOR_NAME: "a",
						GIT_AUTHOR_EMAIL: "a@b",
						GIT_COMMITTER_NAME: "a",
						GIT_COMMITTER_EMAIL: "a@b",
					},
				}).trim();
				git(far, "update-ref", "refs/heads/agent-board/row1", commit);
				git(far, "update-ref", "refs/agent-board/wip/row1", commit);
				try {
					expect(fetchBack({ repo, remote: { url: far }, rowId: "row1", landing, base })).toEqual({
						head: commit,
						wip: commit,
					});
				} catch (error) {
					failures.push(error instanceof Error ? error.message : String(error));
				}
			}
		} finally {
			adder.kill("SIGKILL");
		}
		expect(round).toBeGreaterThan(5);
		expect(failures).toEqual([]);
		expect(git(repo, "rev-parse", "refs/agent-board/remote/row1")).toBe(
			git(far, "rev-parse", "refs/heads/agent-board/row1"),
		);
		// The landing never collects garbage (its refs are not the repository's).
		expect(git(landing, "config", "gc.auto")).toBe("0");
	});
});
