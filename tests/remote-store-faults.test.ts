/**
 * Remote runs whose far side goes wrong under them (#24 items 3, 4, 6 and the general guard), with a real
 * sshd on 127.0.0.1 and a second Unix user as the host: a far store tampered with as the host user (a
 * 20 MB line in events.jsonl, the session grown past its limit, run.json's cwd pointed elsewhere) fails
 * the row naming each file and limit, never a completion it did not mirror, while every real event
 * and the real work still arrive; the remote dir deleted mid-run fails the row, and the next dispatch
 * reinstalls; a row whose link, far runner and worker were all killed (and its far files removed)
 * ends under the supervise step; a stop while the host is unreachable shows "stop requested" until
 * it is delivered; a killed ssh client never reads "exit null".
 */
import { appendFileSync, existsSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { rowWhere as rowWhereOn, waitDone } from "../test-support/board-helpers.ts";
import { initRepo } from "../test-support/git-repo.ts";
import type { ModelServer } from "../test-support/model-server.ts";
import { waitFor } from "../test-support/pi-harness.ts";
import { requires, sshdMissing } from "../test-support/requires.ts";
import type { SshHost } from "../test-support/sshd.ts";
import { startSshBoard, type SshBoard } from "../test-support/ssh-board.ts";
import { sharedScratchRoot } from "../test-support/shared-scratch.ts";

const missing = sshdMissing();
let host: SshHost;
let model: ModelServer;
let repo: string;
let board: BoardEngine;
let fixture: SshBoard | undefined;

beforeAll(async () => {
	if (missing) return;
	fixture = await startSshBoard("pab-store-faults-");
	({ host, model, repo, board } = fixture);
	model.setScript({ rules: RULES });
}, 180_000);

const RULES = [
	{ match: "STALL", steps: [{ toolCall: { name: "bash", args: { command: "sleep 300" } } }, { text: "never" }] },
	{
		match: "AGAIN",
		steps: [{ toolCall: { name: "bash", args: { command: "echo again > again.txt" } } }, { text: "Again." }],
	},
];

afterAll(async () => {
	if (missing) return;
	await fixture?.cleanup();
});

const farRoot = (dir = ".agent-board") => join(host.user.home, dir);
const farRun = (row: BoardRow, dir?: string) =>
	join(farRoot(dir), "store", "rows", row.id, "runs", row.currentRunId ?? "");

const rowWhere = (id: string, what: string, test: (row: BoardRow) => boolean, timeoutMs = 60_000) =>
	rowWhereOn(board, id, what, test, timeoutMs);

const onlySshd = () =>
	host.user.processes().every((pid) => readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "sshd");
const seqsOf = (text: string) =>
	text
		.split("\n")
		.filter((line) => line && line.length < 1024 * 1024)
		.map((line) => (JSON.parse(line) as { seq: number }).seq);

describe("a far store that goes wrong", () => {
	it("fails a tampered run naming each file and limit, while every real event and the work come back", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const release = join(sharedScratchRoot(), `pab-tamper-release-${process.pid}`);
		rmSync(release, { force: true });
		model.setScript({
			rules: [
				...RULES,
				{
					match: "TAMPER",
					steps: [
						{
							toolCall: {
								name: "bash",
								args: {
									command: `echo real > real.txt && while [ ! -e ${release} ]; do sleep 0.1; done && echo after > after.txt`,
								},
							},
						},
						{ text: "Done here." },
					],
				},
			],
		});
		const row = await board.dispatch({ prompt: "TAMPER the far store", cwd: repo, target: "h" });
		const working = await rowWhere(row.id, "the tool to run on the host", (r) => r.live?.tool?.name === "bash");
		const far = farRun(working);
		// As the host user could: a 20 MB line in events.jsonl, the session grown to 2 GiB (sparse), and
		// run.json's cwd pointed at another repository of the host's.
		appendFileSync(
			join(far, "events.jsonl"),
			`${JSON.stringify({ seq: 999_999, at: 1, type: "message_end", pad: "x".repeat(20 * 1024 * 1024) })}\n`,
		);
		const farSession = join(farRoot(), "store", "sessions", row.id, `${row.id}.jsonl`);
		truncateSync(farSession, 2 * 1024 ** 3);
		const decoy = initRepo(join(host.user.home, "decoy"), { "decoy.txt": "not the row's work\n" });
		execFileSync("chown", ["-R", `${host.user.uid}:${host.user.gid}`, decoy]);
		const runJson = JSON.parse(readFileSync(join(far, "run.json"), "utf8")) as Record<string, unknown>;
		writeFileSync(join(far, "run.json"), JSON.stringify({ ...runJson, cwd: decoy }));
		writeFileSync(release, "");

		const done = await waitDone(board, row.id, 120_000);
		expect(done.state).toBe("failed");
		expect(["mirror-incomplete", "session-too-large", "far-tampered"]).toContain(done.errorCode);
		expect(done.error).toContain(`${join(far, "events.jsonl")} on the target: skipped 1 line(s) over 1 MiB`);
		expect(done.error).toMatch(
			new RegExp(
				`${farSession.replace(/[.]/g, "\\.")} on the target is 2(\\.0)? GiB, over the 1 GiB a session may be: not mirrored`,
			),
		);
		expect(done.error).toContain(
			`${join(far, "run.json")} on the target names /cwd ${JSON.stringify(decoy)}, not a directory of the row's workspace`,
		);
		expect(done.error).toContain("(the run ended completed on h)");
		// Every event the runner wrote arrived, once, in order; the junk line did not.
		const farEvents = readFileSync(join(far, "events.jsonl"), "utf8");
		const localEvents = readFileSync(join(done.runDir ?? "", "events.jsonl"), "utf8");
		expect(seqsOf(localEvents)).toEqual(seqsOf(farEvents).filter((seq) => seq !== 999_999));
		expect(localEvents).toContain("Done here.");
		expect(localEvents).not.toContain("xxxxxxxx");
		// The skipped line counts as a dropped event, as one a runner could not write does.
		expect(JSON.parse(readFileSync(join(done.runDir ?? "", "status.json"), "utf8"))).toMatchObject({
			droppedEvents: 1,
		});
		// The work is the row's workspace's, not what run.json named.
		expect(readFileSync(join(done.worktreePath ?? "", "real.txt"), "utf8")).toBe("real\n");
		expect(readFileSync(join(done.worktreePath ?? "", "after.txt"), "utf8")).toBe("after\n");
		expect(existsSync(join(done.worktreePath ?? "", "decoy.txt"))).toBe(false);
		rmSync(farSession, { force: true });
		rmSync(release, { force: true });
	}, 240_000);

	it("fails a row whose remote dir is deleted mid-run, and the next dispatch reinstalls", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		await board.targets.add("d", { kind: "ssh", host: host.alias, sshConfig: host.configFile, dir: ".pab-deleted" });
		const row = await board.dispatch({ prompt: "STALL then lose the dir", cwd: repo, target: "d" });
		await rowWhere(row.id, "the tool to run on the host", (r) => r.live?.tool?.name === "bash");
		const deletedAt = Date.now();
		rmSync(farRoot(".pab-deleted"), { recursive: true, force: true });
		const done = await waitDone(board, row.id, 120_000);
		console.log(`remote dir deleted: the row failed ${(done.endedAt ?? 0) - deletedAt} ms later`);
		expect(done).toMatchObject({ state: "failed", errorCode: "far-run-gone" });
		expect(done.error).toBe(`the run's directory on the target is gone: ${farRun(done, ".pab-deleted")}`);
		await waitFor(onlySshd, "nothing of the host user but its ssh sessions", 60_000);
		// The next dispatch there puts everything back.
		const next = await board.dispatch({ prompt: "AGAIN after the loss", cwd: repo, target: "d" });
		expect(await waitDone(board, next.id, 120_000)).toMatchObject({ state: "completed", latestAssistant: "Again." });
	}, 240_000);

	it("ends a row under the supervise step once its link, far runner and worker are gone, whatever took them", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const rows = await Promise.all(
			["files kept", "files gone"].map((what) =>
				board.dispatch({ prompt: `STALL ${what}`, cwd: repo, target: "h" }),
			),
		);
		for (const row of rows)
			await rowWhere(row.id, "the tool to run on the host", (r) => r.live?.tool?.name === "bash");
		const [kept, gone] = await Promise.all(rows.map(async (row) => (await board.get(row.id)) as BoardRow));
		for (const row of [kept, gone] as BoardRow[]) {
			const pidOf = (file: string) => (JSON.parse(readFileSync(file, "utf8")) as { pid: number }).pid;
			for (const pid of [
				pidOf(join(row.runDir ?? "", "runner.json")),
				pidOf(join(farRun(row), "runner.json")),
				pidOf(join(farRun(row), "worker.json")),
			])
				process.kill(pid, "SIGKILL");
		}
		rmSync(farRun(gone as BoardRow), { recursive: true, force: true });
		// The board's tick: the supervise step every 2 s (the pass without inotify), until both end.
		const began = Date.now();
		const ended = await waitFor(
			async () => {
				await board.supervise();
				const now = await Promise.all(rows.map((row) => board.get(row.id)));
				if (now.every((row) => row && !row.alive && row.state !== "working" && row.state !== "queued")) return now;
				await new Promise((r) => setTimeout(r, 2000));
				return undefined;
			},
			"both rows to end",
			120_000,
		);
		console.log(`guard: both rows ended ${Date.now() - began} ms after the supervise steps began`);
		expect(ended[0]).toMatchObject({ state: "failed", error: "runner died" });
		expect(ended[1]).toMatchObject({
			state: "failed",
			errorCode: "far-run-gone",
			error: `the run's directory on the target is gone: ${farRun(gone as BoardRow)}`,
		});
		await waitFor(onlySshd, "nothing of the host user but its ssh sessions", 60_000);
	}, 240_000);

	it("says a killed ssh client cut the connection, never exit null, and follows again", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const row = await board.dispatch({ prompt: "STALL for a cut", cwd: repo, target: "h" });
		const working = await rowWhere(row.id, "the tool to run on the host", (r) => r.live?.tool?.name === "bash");
		const link = JSON.parse(readFileSync(join(working.runDir ?? "", "runner.json"), "utf8")) as { pid: number };
		const children = execFileSync("ps", ["-o", "pid=,comm=", "--ppid", String(link.pid)], { encoding: "utf8" })
			.split("\n")
			.map((l) => l.trim().split(/\s+/))
			.filter(([, comm]) => comm === "ssh");
		expect(children.length).toBeGreaterThan(0);
		for (const [pid] of children) process.kill(Number(pid), "SIGKILL");
		const log = join(working.runDir ?? "", "runner.log");
		await waitFor(
			() =>
				/ unreachable \(retry in \d+ ms\): the connection to pab-host was cut \(its (run|follow|link) channel ended by SIGKILL\)/.test(
					readFileSync(log, "utf8"),
				) || undefined,
			"the link to say the connection was cut",
		);
		expect(readFileSync(log, "utf8")).not.toContain("exit null");
		await rowWhere(
			row.id,
			"the row to follow again",
			(r) => r.unreachable === undefined && r.live?.tool?.name === "bash",
		);
		expect((await board.stop(row.id)).state).toBe("stopped");
	}, 240_000);

	it("shows a stop while the host is unreachable as stop requested until it is delivered", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const row = await board.dispatch({ prompt: "STALL for a stop", cwd: repo, target: "h" });
		await rowWhere(row.id, "the tool to run on the host", (r) => r.live?.tool?.name === "bash");
		await host.stop();
		await rowWhere(row.id, "the row to show the host unreachable", (r) => r.unreachable !== undefined);
		const asked = await board.stop(row.id);
		expect(asked).toMatchObject({ state: "working" });
		expect(asked.summary).toMatch(/^stop requested; unreachable since \d\d:\d\d:\d\d: /);
		// It stays requested through the link's retries (each writes the row's status) until the host is back.
		const link = join(asked.runDir ?? "", "runner.log");
		const retries = () => (readFileSync(link, "utf8").match(/ unreachable \(retry in/g) ?? []).length;
		const before = retries();
		await waitFor(() => retries() > before || undefined, "the link to try again", 60_000);
		expect((await board.get(row.id))?.summary).toMatch(/^stop requested; unreachable since/);
		await host.start();
		expect(await waitDone(board, row.id, 90_000)).toMatchObject({ state: "stopped" });
		await waitFor(onlySshd, "nothing of the host user but its ssh sessions", 60_000);
	}, 240_000);
});
