/**
 * The far side of a target without ssh: follow over a run directory (resume points, idempotent inbox,
 * a dead runner's end), and git travel between a repository and a target's mirror (local paths), which
 * must leave the local mirror worktree byte-identical to the target's worktree.
 */
import { spawnSync } from "node:child_process";
import {
	appendFileSync,
	chmodSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	symlinkSync,
	unlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { followRun } from "../runner/far/far-follow.mjs";
import { prepareRun } from "../runner/far/far-run.mjs";
import type { Frame } from "../runner/far/frames.mjs";
import { fetchBack, layOver, pushBase, repoKey } from "../runner/link/git-travel.mjs";
import { ensureMirror, snapshotWip, syncWorktree } from "../runner/far/git-workspace.mjs";
import { processStartTime } from "../runner/store/proc.mjs";
import { git, initRepo } from "../test-support/git-repo.ts";
import { waitFor } from "../test-support/pi-harness.ts";
import { farTree } from "../test-support/target-helpers.ts";

const temps: string[] = [];
const temp = (): string => {
	const dir = mkdtempSync(join(tmpdir(), "pab-far-"));
	temps.push(dir);
	return dir;
};
afterEach(() => {
	for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

/** A prepared far run in `dir` for a repository with one commit. */
function preparedRun(dir: string) {
	const repo = initRepo(join(dir, "local"), { "a.txt": "a\n" });
	const mirror = join(dir, "far/repos", `${repoKey(repo)}.git`);
	ensureMirror(mirror);
	const base = git(repo, "rev-parse", "HEAD");
	pushBase({ repo, remote: { url: mirror }, rowId: "row1", commit: base });
	const prepared = prepareRun(join(dir, "far"), {
		rowId: "row1",
		runId: "run1",
		repoKey: repoKey(repo),
		base,
		prompt: "secret prompt",
		env: { X: "1" },
		createdAt: Date.now(),
		session: null,
	});
	return { repo, base, ...prepared };
}

describe("follow", () => {
	it("streams from the resume points, delivers inbox messages once, and ends a dead runner's run", async () => {
		const dir = temp();
		const { runDir, worktree } = preparedRun(dir);
		const config = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8"));
		expect(config).toMatchObject({
			prompt: "secret prompt",
			cwd: worktree,
			env: { AGENT_BOARD_WORKER: "1", AGENT_BOARD_ROW: "row1", X: "1", TMPDIR: join(dir, "far/tmp") },
		});
		expect(statSync(join(runDir, "run.json")).mode & 0o777).toBe(0o600);
		expect(statSync(runDir).mode & 0o777).toBe(0o700);
		// A live "runner" (this test's own process) and what a runner would have written so far.
		writeFileSync(
			join(runDir, "runner.json"),
			JSON.stringify({ pid: process.pid, start: processStartTime(process.pid) }),
		);
		const events = [1, 2, 3, 4].map((seq) =>
			JSON.stringify({
				seq,
				at: 1,
				type: seq === 4 ? "tool_execution_end" : "message_update",
				delta: `d${seq}\u2028`,
			}),
		);
		writeFileSync(join(runDir, "events.jsonl"), `${events.join("\n")}\n{"seq":5,"partial`);
		mkdirSync(join(runDir, "receipts"), { recursive: true });
		writeFileSync(
			join(runDir, "receipts", "m0.json"),
			JSON.stringify({ id: "m0", status: "delivered", at: 1, preview: "" }),
		);
		writeFileSync(config.sessionFile, "0123456789");

		const frames: Frame[] = [];
		let done = false;
		const follower = followRun({
			runDir,
			fromSeq: 2,
			sessionFrom: 4,
			sessionFile: config.sessionFile,
			worktree,
			rowId: "row1",
			send: (frame) => frames.push(frame),
			onDone: () => (done = true),
		});
		await waitFor(() => frames.some((f) => f.t === "git"), "the first pass");
		expect(frames.filter((f) => f.t === "event").map((f) => (f.t === "event" ? f.seq : 0))).toEqual([3, 4]);
		expect(frames.find((f) => f.t === "session")).toEqual({
			t: "session",
			offset: 4,
			data: Buffer.from("456789").toString("base64"),
		});
		expect(frames.find((f) => f.t === "receipt")).toMatchObject({ receipt: { id: "m0" } });
		const gitFrame = frames.find((f) => f.t === "git");
		expect(gitFrame).toMatchObject({ head: git(worktree, "rev-parse", "HEAD") });

		appendFileSync(join(runDir, "events.jsonl"), `":1}\n`);
		appendFileSync(config.sessionFile, "AB");
		follower.deliver({ id: "m1", kind: "message", text: "steer me", at: 1 });
		follower.deliver({ id: "m1", kind: "message", text: "again", at: 2 });
		follower.deliver({ id: "../evil", kind: "message", text: "x", at: 3 });
		await waitFor(
			() =>
				frames.some((f) => f.t === "event" && f.seq === 5) && frames.filter((f) => f.t === "session").length === 2,
			"the appended event and bytes",
		);
		expect(JSON.parse(readFileSync(join(runDir, "inbox", "m1.json"), "utf8")).text).toBe("steer me");
		expect(readdirSync(join(runDir, "inbox"))).toEqual(["m1.json"]);
		expect(frames.some((f) => f.t === "error" && f.message.includes("bad id"))).toBe(true);
		// A message already answered is not written again (a reconnecting link resends what it has).
		writeFileSync(join(runDir, "receipts", "m2.json"), "{}");
		follower.deliver({ id: "m2", kind: "message", text: "late", at: 4 });
		expect(existsSync(join(runDir, "inbox", "m2.json"))).toBe(false);

		// The runner dies without recording its end (killed, the host rebooted): follow records it.
		const dead = spawnSync(process.execPath, ["-e", "0"]).pid;
		writeFileSync(join(runDir, "runner.json"), JSON.stringify({ pid: dead, start: "1" }));
		await waitFor(() => done, "follow to end");
		const end = frames.at(-1);
		expect(end).toMatchObject({ t: "end", status: { state: "failed", error: "runner died" } });
		expect(JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")).state).toBe("failed");
		// The unclaimed inbox message got its answer with the end.
		expect(JSON.parse(readFileSync(join(runDir, "receipts", "m1.json"), "utf8"))).toMatchObject({
			status: "rejected",
			reason: "run ended",
		});
		const seqs = frames.filter((f) => f.t === "event").map((f) => (f.t === "event" ? f.seq : 0));
		expect(seqs).toEqual([3, 4, 5]);
	});

	it("never reads or writes through a symlink the target planted (a container's agent owns those dirs)", async () => {
		const dir = temp();
		const { runDir } = preparedRun(dir);
		const secretDir = join(temp(), "home");
		mkdirSync(secretDir);
		writeFileSync(join(secretDir, "auth.json"), JSON.stringify({ anthropic: { key: "SECRET-KEY" } }));
		writeFileSync(join(secretDir, "id_ed25519"), "SECRET-PRIVATE-KEY\n");
		const sessionDir = join(dir, "far/store/sessions/row1");
		mkdirSync(join(runDir, "receipts"), { recursive: true });
		rmSync(join(runDir, "status.json"));
		symlinkSync(join(secretDir, "auth.json"), join(runDir, "status.json"));
		symlinkSync(join(secretDir, "id_ed25519"), join(runDir, "events.jsonl"));
		symlinkSync(join(secretDir, "auth.json"), join(runDir, "receipts", "r.json"));
		symlinkSync(join(secretDir, "id_ed25519"), join(sessionDir, "row1.jsonl"));
		// The temp name the next inbox write would use, planted in advance for a range of counters.
		mkdirSync(join(runDir, "inbox"), { recursive: true });
		for (let n = 0; n < 200; n++)
			symlinkSync(join(secretDir, "victim"), join(runDir, "inbox", `.m1.json.${process.pid}.${n}.tmp`));
		const frames: Frame[] = [];
		const follower = followRun({
			runDir,
			fromSeq: 0,
			sessionFrom: 0,
			sessionFile: join(sessionDir, "row1.jsonl"),
			worktree: null,
			rowId: "row1",
			send: (f) => frames.push(f),
			onDone: () => undefined,
			alive: () => true,
		});
		follower.deliver({ id: "m1", kind: "message", text: "hello", at: 1 });
		await new Promise((resolve) => setTimeout(resolve, 300));
		follower.close();
		expect(JSON.stringify(frames)).not.toMatch(/SECRET/);
		expect(
			frames.filter((f) => f.t === "status" || f.t === "event" || f.t === "receipt" || f.t === "session"),
		).toEqual([]);
		expect(existsSync(join(secretDir, "victim"))).toBe(false);
		expect(JSON.parse(readFileSync(join(runDir, "inbox", "m1.json"), "utf8")).text).toBe("hello");
	});

	it("keeps a run's session from being overwritten by a new row's first run", () => {
		const dir = temp();
		const first = preparedRun(dir);
		const session = JSON.parse(readFileSync(join(first.runDir, "run.json"), "utf8")).sessionFile;
		writeFileSync(session, "a stranger's session\n");
		const again = prepareRun(join(dir, "far"), {
			rowId: "row1",
			runId: "run2",
			repoKey: repoKey(first.repo),
			base: first.base,
			prompt: "p",
			env: {},
			createdAt: 1,
			session: null,
		});
		expect(again.session).toBeNull();
		expect(readdirSync(join(session, "..")).some((name) => name.startsWith("row1.jsonl.aside-"))).toBe(true);
		writeFileSync(join(first.runDir, "runner.json"), "{}");
		expect(() =>
			prepareRun(join(dir, "far"), {
				rowId: "row1",
				runId: "run1",
				repoKey: repoKey(first.repo),
				base: first.base,
				prompt: "p",
				env: {},
				createdAt: 1,
				session: null,
			}),
		).toThrow(/already started/);
		expect(() =>
			prepareRun(join(dir, "far"), {
				rowId: "../x",
				runId: "run3",
				repoKey: "k",
				base: first.base,
				prompt: "p",
				env: {},
				createdAt: 1,
				session: null,
			}),
		).toThrow();
	});
});

describe("git travel", () => {
	it("lays the target's committed, modified, untracked and deleted files over the local mirror, round after round", async () => {
		const dir = temp();
		const repo = initRepo(join(dir, "repo"), {
			"keep.txt": "keep\n",
			"edit.txt": "v1\n",
			"gone.txt": "bye\n",
			".gitignore": "ignored/\n",
		});
		git(repo, "worktree", "add", "-q", "-b", "agent-board/row1", join(dir, "mirror"));
		const local = join(dir, "mirror");
		const mirror = join(dir, "target/repos/r.git");
		ensureMirror(mirror);
		const base = git(repo, "rev-parse", "HEAD");
		pushBase({ repo, remote: { url: mirror }, rowId: "row1", commit: base });
		const remote = join(dir, "target/work/row1");
		expect(syncWorktree({ mirror, worktree: remote, rowId: "row1", base })).toEqual({
			head: base,
			action: "created",
		});

		const round = async (): Promise<void> => {
			const indexBefore = readFileSync(join(mirror, "worktrees/row1/index"));
			await snapshotWip(remote, "row1");
			// The agent's own index is never touched by a snapshot.
			expect(readFileSync(join(mirror, "worktrees/row1/index")).equals(indexBefore)).toBe(true);
			fetchBack({ repo, remote: { url: mirror }, rowId: "row1" });
			await layOver({ worktree: local, rowId: "row1" });
			expect(farTree(local)).toEqual(
				Object.fromEntries(Object.entries(farTree(remote)).filter(([path]) => !path.startsWith("ignored/"))),
			);
			expect(git(local, "status", "--porcelain")).toBe(git(remote, "status", "--porcelain"));
			expect(git(local, "rev-parse", "HEAD")).toBe(git(remote, "rev-parse", "HEAD"));
		};

		// Round 1: a commit, then uncommitted edits, an untracked file, a deletion, a new mode, an ignored file.
		writeFileSync(join(remote, "committed.txt"), "c\n");
		git(remote, "add", "committed.txt");
		git(remote, "-c", "user.name=A", "-c", "user.email=a@b", "commit", "-q", "-m", "agent commit");
		writeFileSync(join(remote, "edit.txt"), "v2\n");
		mkdirSync(join(remote, "new/dir"), { recursive: true });
		writeFileSync(join(remote, "new/dir/untracked.txt"), "u\n");
		unlinkSync(join(remote, "gone.txt"));
		chmodSync(join(remote, "keep.txt"), 0o755);
		mkdirSync(join(remote, "ignored"));
		writeFileSync(join(remote, "ignored/big.bin"), "not travelling");
		await round();
		expect(git(local, "status", "--porcelain")).toContain("?? new/");

		// Round 2: the untracked file goes away, another appears, the edit is reverted.
		rmSync(join(remote, "new"), { recursive: true });
		writeFileSync(join(remote, "other.txt"), "o\n");
		writeFileSync(join(remote, "edit.txt"), "v1\n");
		await round();
		expect(existsSync(join(local, "new"))).toBe(false);

		// The next run starts from the local branch: unchanged when nothing moved; after a local
		// commit of exactly the fetched work, the target's worktree moves onto it.
		const head = git(local, "rev-parse", "HEAD");
		expect(syncWorktree({ mirror, worktree: remote, rowId: "row1", base: head }).action).toBe("unchanged");
		git(local, "add", "-A");
		git(local, "-c", "user.name=U", "-c", "user.email=u@b", "commit", "-q", "-m", "merge --commit");
		const merged = git(local, "rev-parse", "HEAD");
		pushBase({ repo, remote: { url: mirror }, rowId: "row1", commit: merged });
		expect(syncWorktree({ mirror, worktree: remote, rowId: "row1", base: merged })).toEqual({
			head: merged,
			action: "moved",
		});
		expect(git(remote, "status", "--porcelain")).toBe("");
		// Work at the target that the pushed base lacks is never thrown away.
		writeFileSync(join(remote, "edit.txt"), "unfetched\n");
		git(local, "-c", "user.name=U", "-c", "user.email=u@b", "commit", "-q", "--allow-empty", "-m", "local only");
		const ahead = git(local, "rev-parse", "HEAD");
		pushBase({ repo, remote: { url: mirror }, rowId: "row1", commit: ahead });
		expect(() => syncWorktree({ mirror, worktree: remote, rowId: "row1", base: ahead })).toThrow(
			/has work that is not in the pushed base/,
		);
		expect(readFileSync(join(remote, "edit.txt"), "utf8")).toBe("unfetched\n");
	});
});
