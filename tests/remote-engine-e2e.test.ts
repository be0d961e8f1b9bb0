/**
 * A container target on a remote engine (`--engine-host`), end to end: podman's API service run
 * rootless as a second Unix user behind its own sshd (test-support/remote-engine.ts), the board on
 * this side talking to it only through `podman --remote --url ssh://...`. `targets check` makes the
 * station and copies our files in; a row runs there against the real pi and the loopback scripted
 * model, streams, is steered and answered in place, its code comes back by git and merges locally, a
 * reply runs again on the merged branch, and removing its worktree removes the station's copy; three attempts run there at once and one is merged; the engine's machine going away shows on the row with the
 * engine's words and the run resumes when it is back; a stop through a new link (the old one killed)
 * ends the run's processes in the station; a station removed from outside ends its row as a reboot
 * does and the next row gets a new one; and removing
 * the target removes the station (its volume, the rows' work, stays). Nothing
 * of this machine is mounted into the engine's containers, and the prompt is on no command line.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stationName } from "../runner/kinds/container/engine-remote.mjs";
import { createBoardService, type BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import { git, initRepo } from "../test-support/git-repo.ts";
import { startModelServer, writeAgentDir, type ModelServer } from "../test-support/model-server.ts";
import { PI_CLI, waitFor } from "../test-support/pi-harness.ts";
import { remoteEngineMissing, startRemotePodman, type RemoteEngine } from "../test-support/remote-engine.ts";
import { podmanMissing, requires, sshdMissing } from "../test-support/requires.ts";
import { procsMentioning, threeAttemptsMergeOne } from "../test-support/target-helpers.ts";

const missing = sshdMissing() ?? podmanMissing() ?? remoteEngineMissing();
let engine: RemoteEngine;
let model: ModelServer;
let root: string;
let store: string;
let repo: string;
let board: BoardEngine;
const FORWARDED = `forwarded-${process.pid}-value`;
const agentDirBefore = process.env.PI_CODING_AGENT_DIR;

beforeAll(async () => {
	if (missing) return;
	engine = await startRemotePodman();
	model = await startModelServer({ chunkDelayMs: 300 });
	root = mkdtempSync(join(tmpdir(), "pab-remote-engine-"));
	store = join(root, "store");
	// The user's pi home: each run gets its provider's part of it, in the station.
	process.env.PI_CODING_AGENT_DIR = writeAgentDir(model, join(root, "agent"));
	repo = initRepo(join(root, "repo"), { "edit.txt": "v1\n", "shared.txt": "base\n" });
	board = createBoardService({
		storeDir: store,
		piCommand: [process.execPath, PI_CLI],
		env: { ...process.env, PAB_FORWARDED: FORWARDED },
	});
	await board.targets.add("far", {
		kind: "container",
		engine: "podman",
		image: engine.image,
		engineHost: engine.url,
		engineIdentity: engine.identity,
		network: "host",
		env: ["PAB_FORWARDED"],
	});
}, 300_000);

afterAll(async () => {
	if (missing) return;
	process.env.PI_CODING_AGENT_DIR = agentDirBefore;
	await engine?.cleanup();
	await model?.close();
	if (root) rmSync(root, { recursive: true, force: true });
});

async function rowWhere(
	id: string,
	what: string,
	test: (row: BoardRow) => boolean,
	timeoutMs = 90_000,
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

/** Processes in the station (as the engine's user sees them: `podman top`). */
const inStation = () => engine.podman(["top", stationName(store, "far"), "args"]);

describe("a container target on a remote engine", () => {
	it("checks, runs a row in the engine's station, steers and answers in place, brings the code back, merges and runs again", async (ctx) => {
		requires(ctx, "sshd, podman and uidmap", missing);
		const check = await board.targets.check("far");
		expect(check.items.map((i) => `${i.ok ? "ok" : "FAIL"} ${i.name}`)).toEqual([
			"ok engine",
			"ok station",
			"ok node",
			"ok pi",
			"ok git",
			"ok dir",
			"ok disk",
			"ok board files",
		]);
		// The station: the engine user's container, with no mount of this machine's paths.
		const mounts = engine
			.podman([
				"inspect",
				"--format",
				"{{range .Mounts}}{{.Type}}:{{.Destination}} {{end}}",
				stationName(store, "far"),
			])
			.trim();
		expect(mounts).toBe("volume:/srv/agent-board");

		const words = Array.from({ length: 30 }, (_, n) => `w${n}`).join(" ");
		model.setScript({
			rules: [
				{
					match: "STEER-ENGINE",
					steps: [
						{ toolCall: { name: "ask_user", args: { question: "Which colour?", options: ["blue", "red"] } } },
						{ text: `Done in blue. ${words} end.` },
					],
				},
				{
					match: "ENGINE-TASK",
					steps: [
						{
							toolCall: {
								name: "bash",
								args: {
									command: `pwd > where.txt && echo v2 > edit.txt && git add -A && git -c user.name=a -c user.email=b commit -qm agent-change && echo wip > wip.txt && echo "FWD=$PAB_FORWARDED" && while [ ! -e /tmp/release ]; do sleep 0.1; done`,
								},
							},
						},
					],
				},
			],
		});
		const prompt = `ENGINE-TASK ${Date.now()} change edit.txt`;
		const go = model.hold();
		const row = await board.dispatch({ prompt, cwd: repo, target: "far" });
		expect(row).toMatchObject({ target: "far", worktreeMode: "worktree" });
		await model.waitForRequest((r) => r.prompt === prompt, "the worker's first request from the station", 120_000);
		// Held at the model: neither the prompt nor the forwarded value is on any command line.
		expect(procsMentioning(prompt.slice(0, 20))).toEqual([]);
		expect(procsMentioning(FORWARDED)).toEqual([]);
		go();

		await rowWhere(row.id, "the bash tool to run in the station", (r) => r.live?.tool?.name === "bash");
		expect(inStation()).toContain("job-runner.mjs");
		const steered = await board.reply(row.id, "STEER-ENGINE use blue", { receiptTimeoutMs: 60_000 });
		expect(steered.delivery).toBe("steer");
		engine.podman(["exec", stationName(store, "far"), "touch", "/tmp/release"]);
		const asking = await rowWhere(row.id, "the question in place", (r) => r.state === "needs_input" && r.alive);
		expect(asking.question).toBe("Which colour?");
		const answered = await board.reply(row.id, "blue", { receiptTimeoutMs: 60_000 });
		expect(answered.delivery).toBe("answer");
		const done = await waitDone(board, row.id, 120_000);
		expect(done).toMatchObject({ state: "completed", currentRunId: row.currentRunId });
		expect(done.latestAssistant).toContain("Done in blue.");
		expect(done.receipts?.map((r) => [r.status, r.as])).toEqual([
			["delivered", "steer"],
			["delivered", "answer"],
		]);
		const events = readFileSync(join(done.runDir ?? "", "events.jsonl"), "utf8");
		const seqs = events
			.split("\n")
			.filter(Boolean)
			.map((line) => (JSON.parse(line) as { seq: number }).seq);
		expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
		expect(events).toContain(`FWD=${FORWARDED}`);

		// The code came back from the station's workspace, committed and not, and merges here.
		expect(readFileSync(join(done.worktreePath ?? "", "where.txt"), "utf8").trim()).toBe(
			`/srv/agent-board/work/${row.id}`,
		);
		expect(readFileSync(join(done.worktreePath ?? "", "wip.txt"), "utf8")).toBe("wip\n");
		const merged = await board.merge(row.id, { commit: true });
		expect(merged.status).toBe("merged");
		expect(readFileSync(join(repo, "edit.txt"), "utf8")).toBe("v2\n");
		expect(git(repo, "log", "--format=%s")).toContain("agent-change");

		// A reply to the finished row runs again in the station, with the conversation and the merged branch.
		model.setScript({
			rules: [
				{
					match: "ENGINE-AGAIN",
					steps: [
						{ toolCall: { name: "bash", args: { command: "git log -1 --format=%s && cat wip.txt" } } },
						{ text: "Again." },
					],
				},
			],
		});
		const again = await board.reply(row.id, "ENGINE-AGAIN one more thing");
		expect(again.delivery).toBe("new-run");
		const resumed = await waitDone(board, row.id, 120_000);
		expect(resumed).toMatchObject({ state: "completed", latestAssistant: "Again." });
		const request = model.requests().find((r) => r.prompt === "ENGINE-AGAIN one more thing");
		expect(JSON.stringify(request?.messages)).toContain("Done in blue.");
		// The row's credentials left the station with its run.
		await waitFor(
			() => !engine.podman(["exec", stationName(store, "far"), "ls", "/srv/agent-board/homes"]).includes(row.id),
			"the row's pi home to leave the station",
		);

		// Its worktree removed here removes its workspace in the station too.
		const removed = await board.removeWorktree(row.id, { force: true });
		expect(removed.far).toContain(
			`removed its workspace in ${stationName(store, "far")} too (/srv/agent-board/work/${row.id})`,
		);
		expect(engine.podman(["exec", stationName(store, "far"), "ls", "/srv/agent-board/work"])).not.toContain(row.id);
	}, 420_000);

	it("runs three attempts in the station at once, compares them locally and merges one", async (ctx) => {
		requires(ctx, "sshd, podman and uidmap", missing);
		await threeAttemptsMergeOne(board, model, { tag: "ENGINE-ATTEMPT", target: "far", repo });
	}, 240_000);

	it("shows the engine unreachable with its words and recovers; a stop through a new link ends the run in the station; a removed station is made again", async (ctx) => {
		requires(ctx, "sshd, podman and uidmap", missing);
		model.setScript({
			rules: [
				{
					match: "ENGINE-STALL",
					steps: [{ toolCall: { name: "bash", args: { command: "sleep 311" } } }, { text: "never" }],
				},
			],
		});
		const row = await board.dispatch({ prompt: "ENGINE-STALL wait", cwd: repo, target: "far" });
		await rowWhere(row.id, "the tool to run in the station", (r) => r.live?.tool?.name === "bash");
		expect(inStation()).toContain("sleep 311");

		// The engine's machine goes away (its sshd and every connection): the run goes on there.
		await engine.host.stop();
		const away = await rowWhere(row.id, "the row to show the engine unreachable", (r) =>
			/cannot reach its engine/.test(r.unreachable?.reason ?? ""),
		);
		expect(away).toMatchObject({ state: "working", alive: true });
		expect(away.summary).toMatch(/^unreachable since \d\d:\d\d:\d\d: /);
		await engine.host.start();
		const back = await rowWhere(
			row.id,
			"the row to come back",
			(r) => r.unreachable === undefined && r.live?.tool?.name === "bash",
		);
		expect(inStation()).toContain("sleep 311");

		// The link dies (this machine restarted): a stop goes through a new link, which ends it in the station.
		const link = JSON.parse(readFileSync(join(back.runDir ?? "", "runner.json"), "utf8")) as { pid: number };
		process.kill(link.pid, "SIGKILL");
		await waitFor(
			() => !existsSync(`/proc/${link.pid}`) || readFileSync(`/proc/${link.pid}/stat`, "utf8").includes(") Z "),
			"the link to die",
		);
		const stopped = await board.stop(row.id);
		expect(stopped.state).toBe("stopped");
		await waitFor(
			() => !inStation().includes("sleep 311") && !inStation().includes(row.currentRunId ?? "-"),
			"nothing of the run left in the station",
			60_000,
		);

		// The station removed from outside mid-run (its volume stays): the row ends as a host's reboot
		// does, and the next row gets a new station on the same volume.
		const third = await board.dispatch({ prompt: "ENGINE-STALL once more", cwd: repo, target: "far" });
		await rowWhere(third.id, "the tool to run in the station", (r) => r.live?.tool?.name === "bash");
		engine.podman(["rm", "-f", "-t", "0", stationName(store, "far")]);
		const died = await waitDone(board, third.id, 120_000);
		expect(died).toMatchObject({ state: "failed" });
		expect(died.error ?? died.summary).toMatch(/runner died/);
		model.setScript({ rules: [{ match: "ENGINE-AFTER", steps: [{ text: "after" }] }] });
		const after = await board.dispatch({ prompt: "ENGINE-AFTER the station came back", cwd: repo, target: "far" });
		expect(await waitDone(board, after.id, 120_000)).toMatchObject({ state: "completed", latestAssistant: "after" });

		// Removing the target removes its station; the volume with the rows' workspaces stays the user's.
		await board.targets.remove("far");
		expect(engine.podman(["ps", "-a", "--format", "{{.Names}}"])).not.toContain(stationName(store, "far"));
		expect(engine.podman(["volume", "ls", "--format", "{{.Name}}"])).toContain(stationName(store, "far"));
	}, 240_000);
});
