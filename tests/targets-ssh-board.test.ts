/**
 * ssh targets through the board, end to end: a real sshd on 127.0.0.1 logging into a second Unix user
 * whose pi talks to the loopback scripted model. The board adds and checks the target, dispatches
 * there, and everything a local row does works across ssh: live text, steer and an answer in place
 * into the same remote worker, a killed ssh client resumed without losing or repeating an event, the
 * change fetched back and merged locally, a host that goes away shown unreachable and recovered, stop
 * ending everything of the host user, attempts compared and merged, and ssh's refusal of a changed
 * host key on the row. The prompt is on no command line of either end (both are this machine).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import { git } from "../test-support/git-repo.ts";
import type { ModelServer } from "../test-support/model-server.ts";
import { waitFor } from "../test-support/pi-harness.ts";
import { requires, sshdMissing } from "../test-support/requires.ts";
import { startSshBoard, type SshBoard } from "../test-support/ssh-board.ts";
import type { SshHost } from "../test-support/sshd.ts";
import { procsMentioning, threeAttemptsMergeOne } from "../test-support/target-helpers.ts";
import { sharedScratchRoot } from "../test-support/shared-scratch.ts";
import { controlPathFor } from "../runner/kinds/ssh/ssh-transport.mjs";
import { searchStore } from "../runner/search/search.mjs";
import { readWords } from "../runner/live-words.mjs";

const missing = sshdMissing();
let host: SshHost;
let model: ModelServer;
let local: string;
let repo: string;
let board: BoardEngine;
const FORWARDED = `forwarded-${process.pid}-value`;

let fixture: SshBoard | undefined;

beforeAll(async () => {
	if (missing) return;
	fixture = await startSshBoard("pab-ssh-board-", {
		model: { chunkDelayMs: 500 },
		files: { "edit.txt": "v1\n", "shared.txt": "base\n" },
		env: () => ({ PAB_FORWARDED: FORWARDED }),
		targetEnv: ["PAB_FORWARDED"],
		check: false,
	});
	({ host, model, local, repo, board } = fixture);
}, 120_000);

afterAll(async () => {
	if (missing) return;
	await fixture?.cleanup();
});

const farRoot = () => join(host.user.home, ".agent-board");
const farRun = (row: BoardRow) => join(farRoot(), "store", "rows", row.id, "runs", row.currentRunId ?? "");

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

/** The link's ssh children (the follow channel); the master runs apart from it. */
function linkSshChildren(row: BoardRow): number[] {
	const link = JSON.parse(readFileSync(join(row.runDir ?? "", "runner.json"), "utf8")) as { pid: number };
	return execFileSync("ps", ["-o", "pid=,comm=", "--ppid", String(link.pid)], { encoding: "utf8" })
		.split("\n")
		.map((line) => line.trim().split(/\s+/))
		.filter(([, comm]) => comm === "ssh")
		.map(([pid]) => Number(pid));
}

const seqs = (path: string) =>
	readFileSync(path, "utf8")
		.split("\n")
		.filter(Boolean)
		.map((line) => (JSON.parse(line) as { seq: number }).seq);

describe("ssh targets on the board", () => {
	it("checks and installs, runs on the host as its user, streams, steers and answers in place across a killed ssh client, and merges locally", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const check = await board.targets.check("h", { install: true });
		expect(check.items.filter((item) => !item.ok)).toEqual([]);
		expect(check.items.map((item) => item.name)).toEqual([
			"reachable",
			"node",
			"pi",
			"model",
			"git",
			"dir",
			"disk",
			"board files",
		]);

		// Outside the worktree, where this test (root) can create it and the host user can see it.
		const release = join(sharedScratchRoot(), `pab-release-${process.pid}`);
		rmSync(release, { force: true });
		const words = Array.from({ length: 40 }, (_, n) => `w${n}`).join(" ");
		model.setScript({
			rules: [
				{
					match: "STEER-SSH",
					steps: [
						{ toolCall: { name: "ask_user", args: { question: "Which colour?", options: ["blue", "red"] } } },
						{ text: `Done in blue. ${words} end.` },
					],
				},
				{
					match: "SSH-TASK",
					steps: [
						{
							toolCall: {
								name: "bash",
								args: {
									command: `id -un > who.txt && echo v2 > edit.txt && git add -A && git -c user.name=a -c user.email=b commit -qm agent-change && echo wip > wip.txt && echo "FWD=$PAB_FORWARDED" && while [ ! -e ${release} ]; do sleep 0.1; done`,
								},
							},
						},
					],
				},
			],
		});
		const prompt = `SSH-TASK ${Date.now()} change edit.txt`;
		const go = model.hold();
		const row = await board.dispatch({ prompt, cwd: repo, target: "h" });
		expect(row).toMatchObject({ target: "h", worktreeMode: "worktree" });
		const first = await model.waitForRequest((r) => r.prompt === prompt, "the worker's first request on the host");
		// Held at the model: neither the prompt nor the forwarded value is on any command line.
		expect(procsMentioning(prompt.slice(0, 20))).toEqual([]);
		expect(procsMentioning(FORWARDED)).toEqual([]);
		expect(first.authorization).toBe(`Bearer ${model.apiKey}`);
		// `targets` (and S) count it from the live summary, without reading the store.
		expect((await board.targets.list()).map(({ name, running, queued }) => ({ name, running, queued }))).toEqual([
			{ name: "local", running: 0, queued: 0 },
			{ name: "h", running: 1, queued: 0 },
		]);
		// The shared master connection outlives runs: it carries no run's tag, so it never holds a slot.
		const master = spawnSync(
			"ssh",
			[
				"-F",
				host.configFile,
				"-o",
				`ControlPath=${controlPathFor(join(local, "store", "targets", "h"))}`,
				"-O",
				"check",
				host.alias,
			],
			{ encoding: "utf8" },
		);
		const masterPid = Number(/pid=(\d+)/.exec(master.stderr)?.[1]);
		expect(masterPid).toBeGreaterThan(1);
		expect(readFileSync(`/proc/${masterPid}/environ`, "utf8")).not.toContain("AGENT_BOARD_RUN_ID");
		go();

		const working = await rowWhere(row.id, "the bash tool to run on the host", (r) => r.live?.tool?.name === "bash");
		const farWorker = JSON.parse(readFileSync(join(farRun(working), "worker.json"), "utf8")) as { pid: number };
		const steered = await board.reply(row.id, "STEER-SSH use blue", { receiptTimeoutMs: 30_000 });
		expect(steered.delivery).toBe("steer");
		// The ssh client under the link dies; the run goes on and the link follows again.
		const clients = linkSshChildren(working);
		expect(clients.length).toBeGreaterThan(0);
		for (const pid of clients) process.kill(pid, "SIGKILL");
		writeFileSync(release, "");

		const asking = await rowWhere(row.id, "the question in place", (r) => r.state === "needs_input" && r.alive);
		expect(asking.question).toBe("Which colour?");
		expect(existsSync(`/proc/${farWorker.pid}`)).toBe(true);
		const streamed = rowWhere(
			row.id,
			"streamed words before the message ends",
			(r) => /w\d+/.test(r.live?.text ?? "") && !r.live?.text?.includes("end."),
		);
		const answered = await board.reply(row.id, "blue", { receiptTimeoutMs: 30_000 });
		expect(answered.delivery).toBe("answer");
		await streamed;
		const done = await waitDone(board, row.id, 90_000);
		expect(done).toMatchObject({ state: "completed", currentRunId: row.currentRunId });
		expect(done.latestAssistant).toContain("Done in blue.");
		// The far runner's streamed words came over as they streamed (the link's relay, past the killed
		// client's new follow): the local copy's newest words are the far file's.
		expect(readWords(done.runDir ?? "")?.text).toBe(readWords(farRun(done))?.text);
		expect(readWords(done.runDir ?? "")?.text).toMatch(/w\d+/);
		expect(done.receipts?.map((r) => [r.status, r.as])).toEqual([
			["delivered", "steer"],
			["delivered", "answer"],
		]);
		// One remote worker served the task, the steer and the answer.
		expect(JSON.parse(readFileSync(join(farRun(done), "worker.json"), "utf8"))).toMatchObject({ pid: farWorker.pid });
		// Every event arrived once, in order; the session came back byte for byte.
		const localSeqs = seqs(join(done.runDir ?? "", "events.jsonl"));
		expect(localSeqs).toEqual(Array.from({ length: localSeqs.length }, (_, i) => i + 1));
		expect(readFileSync(join(done.runDir ?? "", "events.jsonl"), "utf8")).toBe(
			readFileSync(join(farRun(done), "events.jsonl"), "utf8"),
		);
		expect(
			readFileSync(done.sessionFile).equals(
				readFileSync(join(farRoot(), "store", "sessions", row.id, `${row.id}.jsonl`)),
			),
		).toBe(true);
		const toolOutput = readFileSync(join(done.runDir ?? "", "events.jsonl"), "utf8");
		expect(toolOutput).toContain(`FWD=${FORWARDED}`);

		// The code came back: committed and uncommitted work in the local worktree, merged locally.
		expect(readFileSync(join(done.worktreePath ?? "", "who.txt"), "utf8").trim()).toBe(host.user.name);
		expect(readFileSync(join(done.worktreePath ?? "", "wip.txt"), "utf8")).toBe("wip\n");
		const merged = await board.merge(row.id, { commit: true });
		expect(merged.status).toBe("merged");
		expect(readFileSync(join(repo, "edit.txt"), "utf8")).toBe("v2\n");
		expect(readFileSync(join(repo, "wip.txt"), "utf8")).toBe("wip\n");
		expect(git(repo, "log", "--format=%s")).toContain("agent-change");

		// A reply to the finished row is a new run on the host, with the conversation and the merged
		// branch (its commit pushed; the host's worktree, whose files are that commit's, moves to it).
		model.setScript({
			rules: [
				{
					match: "SSH-AGAIN",
					steps: [
						{ toolCall: { name: "bash", args: { command: "git log -1 --format=%s && cat wip.txt" } } },
						{ text: "Again." },
					],
				},
			],
		});
		const again = await board.reply(row.id, "SSH-AGAIN one more thing");
		expect(again.delivery).toBe("new-run");
		const resumed = await waitDone(board, row.id, 90_000);
		expect(resumed).toMatchObject({ state: "completed", latestAssistant: "Again." });
		const request = model.requests().find((r) => r.prompt === "SSH-AGAIN one more thing");
		expect(JSON.stringify(request?.messages)).toContain("Done in blue.");
		expect(readFileSync(join(resumed.runDir ?? "", "events.jsonl"), "utf8")).toContain("agent-board: work of row");
		rmSync(release, { force: true });
	}, 240_000);

	it("shows a host that went away as unreachable with ssh's reason, recovers, and a stop leaves nothing of the host user", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		model.setScript({
			rules: [
				{
					match: "SSH-STALL",
					steps: [{ toolCall: { name: "bash", args: { command: "sleep 300" } } }, { text: "never" }],
				},
			],
		});
		const row = await board.dispatch({ prompt: "SSH-STALL wait", cwd: repo, target: "h" });
		await rowWhere(row.id, "the tool to run on the host", (r) => r.live?.tool?.name === "bash");
		await expect(board.targets.remove("h")).rejects.toThrow(
			`target h has 1 row(s) running or waiting there (${row.id}): stop them first`,
		);

		await host.stop();
		// Lost, then refused on the reconnect: ssh's own words on the row.
		const away = await rowWhere(row.id, "the row to show the host unreachable", (r) =>
			/Connection refused/.test(r.unreachable?.reason ?? ""),
		);
		expect(away).toMatchObject({ state: "working", alive: true });
		expect(away.summary).toMatch(/^unreachable since \d\d:\d\d:\d\d: /);
		expect((await board.targets.list()).find((t) => t.name === "h")).toMatchObject({
			running: 1,
			unreachable: { since: away.unreachable?.since },
		});
		await host.start();
		const back = await rowWhere(
			row.id,
			"the row to come back",
			(r) => r.unreachable === undefined && r.live?.tool?.name === "bash",
		);

		// The link dies (the board's machine restarted): the run goes on at the host, and a stop now goes
		// through a new link that ends it there.
		const link = JSON.parse(readFileSync(join(back.runDir ?? "", "runner.json"), "utf8")) as { pid: number };
		process.kill(link.pid, "SIGKILL");
		await waitFor(
			() => !existsSync(`/proc/${link.pid}`) || readFileSync(`/proc/${link.pid}/stat`, "utf8").includes(") Z "),
			"the link to die",
		);
		const stopped = await board.stop(row.id);
		expect(stopped.state).toBe("stopped");
		expect(JSON.parse(readFileSync(join(back.runDir ?? "", "runner.json"), "utf8")).pid).not.toBe(link.pid);
		const onlySshd = () =>
			host.user.processes().every((pid) => readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "sshd");
		await waitFor(onlySshd, "nothing of the host user but its ssh sessions", 30_000);

		// The host "reboots" mid-run (every process of its user dies): the row ends, recorded as such.
		const second = await board.dispatch({ prompt: "SSH-STALL again", cwd: repo, target: "h" });
		await rowWhere(second.id, "the tool to run on the host", (r) => r.live?.tool?.name === "bash");
		for (const pid of host.user.processes()) process.kill(pid, "SIGKILL");
		const died = await waitDone(board, second.id, 90_000);
		expect(died).toMatchObject({ state: "failed", error: "runner died" });
	}, 240_000);

	it("finds a row that ran on the host by a word only its far tool printed, with on:h and not on:local", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		model.setScript({
			rules: [
				{
					match: "FAR-WORD",
					steps: [
						{ toolCall: { name: "bash", args: { command: "printf 'narwhal%sfjord\\n' 77" } } },
						{ text: "Printed it there." },
					],
				},
			],
		});
		const row = await board.dispatch({ prompt: "FAR-WORD print it", cwd: repo, target: "h" });
		expect((await waitDone(board, row.id, 120_000)).state).toBe("completed");
		const storeDir = join(local, "store");
		const found = await searchStore(storeDir, "narwhal77fjord", { timeoutMs: 60_000 });
		const hit = found.hits.find((candidate) => candidate.rowId === row.id);
		expect(hit?.fields, JSON.stringify(found)).toContain("tool output");
		expect(hit?.place).toBe("h");
		expect(found.hits.map((candidate) => candidate.rowId)).toEqual([row.id]);
		expect((await searchStore(storeDir, "narwhal77fjord on:h")).hits.map((candidate) => candidate.rowId)).toEqual([
			row.id,
		]);
		expect((await searchStore(storeDir, "narwhal77fjord on:local")).hits).toEqual([]);
	}, 240_000);

	it("runs three attempts on the host, compares them locally and merges one", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		await threeAttemptsMergeOne(board, model, { tag: "SSH-ATTEMPT", target: "h", repo });
	}, 240_000);

	it("refuses bad input with the reason, on the command or the row, leaving nothing behind", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const plain = join(local, "plain");
		mkdirSync(plain, { recursive: true });
		const empty = join(local, "empty");
		mkdirSync(empty, { recursive: true });
		git(empty, "init", "-q");
		const before = (await board.list()).length;
		await expect(board.dispatch({ prompt: "x", cwd: repo, target: "nowhere" })).rejects.toThrow(
			"unknown target nowhere (targets: local, h; add one with /agent-board targets add)",
		);
		await expect(board.dispatch({ prompt: "x", cwd: plain, target: "h" })).rejects.toThrow(
			`running on h (code travels there by git) needs a git repository: ${plain} is not inside one`,
		);
		await expect(board.dispatch({ prompt: "x", cwd: empty, target: "h" })).rejects.toThrow(
			"needs a commit to branch from",
		);
		await expect(board.targets.add("h", { kind: "ssh", host: host.alias })).rejects.toThrow(
			"a target named h exists already",
		);
		await expect(board.targets.add("local", { kind: "ssh", host: host.alias })).rejects.toThrow(
			'"local" is this machine',
		);
		await expect(board.targets.add("x", { kind: "ssh", host: "-oProxyCommand=evil" })).rejects.toThrow(
			"not an ssh host",
		);
		expect((await board.list()).length).toBe(before);

		// A changed host key: ssh's own words on the row; nothing started there.
		await host.changeHostKey();
		const refused = await board.dispatch({ prompt: "SSH-KEY never runs", cwd: repo, target: "h" });
		const failed = await waitDone(board, refused.id, 60_000);
		expect(failed.state).toBe("failed");
		expect(failed.error).toMatch(
			/^cannot start on h: host key changed \(ssh: .*has changed and you have requested strict checking/,
		);
		expect(existsSync(join(farRoot(), "store", "rows", refused.id))).toBe(false);
		const check = await board.targets.check("h");
		expect(check).toMatchObject({ ok: false, items: [{ name: "reachable", ok: false }] });
		expect(check.items[0]?.fix).toContain("ssh-keygen -R");
		host.trustHostKey();

		// A user the host does not let in: ssh's words on the row, the target then removed.
		await board.targets.add("w", { kind: "ssh", host: `nobody@${host.alias}`, sshConfig: host.configFile });
		const denied = await waitDone(
			board,
			(await board.dispatch({ prompt: "SSH-USER never runs", cwd: repo, target: "w" })).id,
			60_000,
		);
		expect(denied.error).toMatch(/^cannot start on w: authentication failed \(ssh: .*Permission denied/);
		await board.targets.remove("w");

		// A dir the host user cannot write: the check says so and how to fix it; a dispatch fails with the host's words.
		await board.targets.add("ro", {
			kind: "ssh",
			host: host.alias,
			sshConfig: host.configFile,
			dir: "/root/pab-not-yours",
			dirAbsolute: true,
		});
		const roCheck = await board.targets.check("ro", { install: true });
		expect(roCheck.items.find((item) => item.name === "dir")).toMatchObject({
			ok: false,
			detail: expect.stringContaining("/root/pab-not-yours"),
			fix: expect.stringContaining("--dir"),
		});
		const ro = await waitDone(
			board,
			(await board.dispatch({ prompt: "SSH-RO never runs", cwd: repo, target: "ro" })).id,
			60_000,
		);
		expect(ro.error).toMatch(/^cannot start on ro: .*Permission denied/);
		await board.targets.remove("ro");
		expect((await board.targets.list()).map((t) => t.name)).toEqual(["local", "h"]);
	}, 120_000);
});
