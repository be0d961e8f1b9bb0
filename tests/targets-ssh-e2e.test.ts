/**
 * ssh targets end to end against a real sshd on 127.0.0.1 logging into a second Unix user with its own
 * pi configuration (the loopback scripted model): our package installed over ssh, code pushed by git,
 * the unchanged runner + pi 1.6 + our extension running as that user, its files followed back over
 * one multiplexed connection, a dropped connection resumed without gap or duplicate, stop and a dead
 * runner ended on the host, and ssh's own reasons for an unreachable host or a changed host key.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callVerb, checkOverSsh, farFollow, farPrepare, sshMirrorRemote, sshTransport } from "../runner/targets/far-client.mjs";
import type { Frame } from "../runner/targets/frames.mjs";
import { fetchBack, layOver, pushBase, repoKey } from "../runner/targets/git-travel.mjs";
import { installOverSsh, packageVersion } from "../runner/targets/pkg-install.mjs";
import { controlPathFor } from "../runner/targets/ssh-transport.mjs";
import { git, initRepo } from "../test-support/git-repo.ts";
import { startModelServer, type ModelServer } from "../test-support/model-server.ts";
import { waitFor } from "../test-support/pi-harness.ts";
import { requires, sshdMissing } from "../test-support/requires.ts";
import { startSshHost, type SshHost } from "../test-support/sshd.ts";
import { farTree, followLog, procsMentioning, type FollowLog } from "../test-support/target-helpers.ts";

const missing = sshdMissing();
let host: SshHost;
let model: ModelServer;
let local: string;
let target: { host: string; sshConfig: string; controlPath: string; dir: string; pkgVersion: string };
let repo: string;
let rowCounter = 0;

beforeAll(async () => {
	if (missing) return;
	host = await startSshHost();
	model = await startModelServer();
	host.user.writePiConfig({ models: model.modelsJson(), auth: model.authJson(), settings: model.settingsJson() });
	local = mkdtempSync(join(tmpdir(), "pab-ssh-e2e-"));
	target = { host: host.alias, sshConfig: host.configFile, controlPath: controlPathFor(join(local, "store/targets/h")), dir: join(host.user.home, ".agent-board"), pkgVersion: packageVersion() };
	repo = initRepo(join(local, "repo"), { "keep.txt": "keep\n", "edit.txt": "v1\n", "gone.txt": "bye\n" });
});

afterAll(async () => {
	if (missing) return;
	await host?.cleanup();
	await model?.close();
	if (local) rmSync(local, { recursive: true, force: true });
});

let install: Promise<{ version: string; outcome: string }> | undefined;
/** The package on the host, installed once for the whole file. */
function installed(): Promise<{ version: string; outcome: string }> {
	install ??= installOverSsh(target, target.dir);
	return install;
}

/** Pushes the repo's HEAD, prepares and starts one run at the host; returns its remote run dir. */
async function startRemoteRun(prompt: string, env: Record<string, string> = {}): Promise<{ rowId: string; runDir: string; worktree: string; mirror: string }> {
	rowCounter += 1;
	const rowId = `row${rowCounter}`;
	const mirror = join(local, `mirror-${rowId}`);
	git(repo, "worktree", "add", "-q", "-b", `agent-board/${rowId}`, mirror);
	const base = git(repo, "rev-parse", "HEAD");
	const key = repoKey(repo);
	pushBase({ repo, remote: sshMirrorRemote(target, key), rowId, commit: base });
	const transport = sshTransport(target);
	const prepared = await farPrepare(transport, target.dir, { rowId, runId: `${rowId}-run1`, repoKey: key, base, prompt, env, createdAt: Date.now() }, join(local, "sessions", `${rowId}.jsonl`));
	await callVerb(transport, "start", [String(prepared.runDir)]);
	return { rowId, runDir: String(prepared.runDir), worktree: String(prepared.worktree), mirror };
}

/** Follows until "end" (or the connection drops), appending to `log` as the link's mirror would. */
function follow(runDir: string, log: FollowLog): { done: Promise<{ ended: boolean; failure?: { kind: string; reason: string } }>; deliver(message: Record<string, unknown>): void; kill(): void } {
	let settle: (outcome: { ended: boolean; failure?: { kind: string; reason: string } }) => void = () => undefined;
	const done = new Promise<{ ended: boolean; failure?: { kind: string; reason: string } }>((resolve) => (settle = resolve));
	const handle = farFollow(sshTransport(target), runDir, log.lastSeq(), log.session.length, (frame: Frame) => log.add(frame), settle);
	return { done, deliver: handle.deliver, kill: () => handle.child.kill("SIGKILL") };
}

describe("ssh targets", () => {
	it("installs over ssh, runs pi with our extension as the host user, mirrors events, session and git back", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const before = await checkOverSsh(target, target.dir, { pkgVersion: target.pkgVersion });
		expect(before).toMatchObject({ node: { ok: true }, pi: { ok: true, version: "1.6.0" }, git: { ok: true }, dir: { ok: true, path: target.dir }, disk: { ok: true }, pkg: { present: false } });
		expect(await installed()).toEqual({ version: target.pkgVersion, outcome: "installed" });
		expect(await installOverSsh(target, target.dir)).toEqual({ version: target.pkgVersion, outcome: "present" });
		const after = await callVerb(sshTransport(target), "check", [target.dir], { input: [{ t: "config", config: { pkgVersion: target.pkgVersion } }] });
		expect(after).toMatchObject({ ok: true, pkg: { present: true } });

		const secret = `SSH-RUN-${Date.now()} make the change`;
		model.setScript({
			rules: [
				{
					match: "SSH-RUN-",
					steps: [
						{ toolCall: { name: "bash", args: { command: "echo c > committed.txt && git add committed.txt && git -c user.name=a -c user.email=b commit -qm c1 && echo v2 > edit.txt && echo u > untracked.txt && rm gone.txt" } } },
						{ text: "Changed the files." },
					],
				},
			],
		});
		const release = model.hold();
		const run = await startRemoteRun(secret, { FROM_ENV: "forwarded" });
		const first = await model.waitForRequest((r) => r.prompt.includes("SSH-RUN-"), "the worker's first request");
		// Held at the model: the prompt is on no command line of this machine (both ends are here).
		expect(procsMentioning("SSH-RUN-")).toEqual([]);
		release();
		expect(first.authorization).toBe(`Bearer ${model.apiKey}`);
		expect(first.prompt).toBe(secret);

		const log = followLog();
		const outcome = await follow(run.runDir, log).done;
		expect(outcome).toEqual({ ended: true, failure: undefined });
		expect(log.end).toMatchObject({ state: "completed" });
		expect(log.seqs()).toEqual(Array.from({ length: log.seqs().length }, (_, i) => i + 1));
		expect(log.eventLines().join("\n")).toBe(readFileSync(join(run.runDir, "events.jsonl"), "utf8").trimEnd());
		expect(log.session.equals(readFileSync(join(target.dir, "store/sessions", run.rowId, `${run.rowId}.jsonl`)))).toBe(true);
		expect(log.git).toBeDefined();
		fetchBack({ repo, remote: sshMirrorRemote(target, repoKey(repo)), rowId: run.rowId });
		layOver({ worktree: run.mirror, rowId: run.rowId });
		expect(farTree(run.mirror)).toEqual(farTree(run.worktree));
		expect(git(run.mirror, "status", "--porcelain")).toBe(" M edit.txt\n D gone.txt\n?? untracked.txt".trimStart());
		expect(git(run.mirror, "log", "-1", "--format=%s")).toBe("c1");
		// The runner is gone once the run ended: nothing of it left on the host.
		await waitFor(() => procsMentioning(run.runDir).length === 0, "the remote runner to exit");
	});

	it("a dropped connection is not a dead run: follow resumes with no gap or duplicate, the inbox delivers once", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		await installed();
		model.setScript({ rules: [{ match: "DROP-RUN", steps: [{ text: "First answer." }] }], fallback: [{ text: "After the steer." }] });
		const release = model.hold();
		const run = await startRemoteRun("DROP-RUN keep going");
		await model.waitForRequest((r) => r.prompt.includes("DROP-RUN"), "the first request");
		const log = followLog();
		const first = follow(run.runDir, log);
		await waitFor(() => log.seqs().length >= 3 && log.session.length > 0, "events and session bytes before the drop");
		const steer = { id: "steer-1", kind: "message", text: "STEER-TEXT use tabs", deliverAs: "steer", at: Date.now() };
		first.deliver(steer);
		await waitFor(() => existsSync(join(run.runDir, "claimed", "steer-1.json")), "the remote runner to claim the message");
		// The local ssh client dies mid-run: the run goes on at the host.
		first.kill();
		expect((await first.done).ended).toBe(false);
		const second = follow(run.runDir, log);
		// A reconnecting link resends what it has not seen answered: written once at most.
		second.deliver(steer);
		release();
		expect(await second.done).toEqual({ ended: true, failure: undefined });
		expect(log.end).toMatchObject({ state: "completed" });
		expect(log.seqs()).toEqual(Array.from({ length: log.seqs().length }, (_, i) => i + 1));
		expect(log.eventLines().join("\n")).toBe(readFileSync(join(run.runDir, "events.jsonl"), "utf8").trimEnd());
		expect(log.session.equals(readFileSync(join(target.dir, "store/sessions", run.rowId, `${run.rowId}.jsonl`)))).toBe(true);
		const receipts = log.frames.flatMap((f) => (f.t === "receipt" && f.receipt.id === "steer-1" ? [f.receipt] : []));
		expect(receipts.length).toBeGreaterThanOrEqual(1);
		expect(receipts.every((r) => r.status === "delivered")).toBe(true);
		expect(readdirSync(join(run.runDir, "receipts"))).toEqual(["steer-1.json"]);
		expect(model.requests().filter((r) => r.prompt === "STEER-TEXT use tabs")).toHaveLength(1);
	});

	it("stop ends the remote runner, worker and tools, verified by start time; nothing of the host user is left", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		await installed();
		model.setScript({ rules: [{ match: "STOP-RUN", steps: [{ toolCall: { name: "bash", args: { command: "sleep 300" } } }, { text: "never" }] }] });
		const run = await startRemoteRun("STOP-RUN now");
		await waitFor(() => host.user.processes().some((pid) => comm(pid) === "sleep"), "the tool to run on the host");
		const stopped = await callVerb(sshTransport(target), "stop", [run.runDir]);
		expect(stopped).toMatchObject({ status: { state: "stopped" }, left: 0 });
		// What is left of the user is the ssh master's session, nothing of the run.
		expect(host.user.processes().map(comm).filter((name) => name !== "sshd")).toEqual([]);
	});

	it("records the end of a run whose runner died with the host (a reboot)", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		await installed();
		model.setScript({ rules: [{ match: "REBOOT-RUN", steps: [{ stall: true }] }] });
		const run = await startRemoteRun("REBOOT-RUN");
		await model.waitForRequest((r) => r.prompt === "REBOOT-RUN", "the worker to be mid-request");
		for (const pid of host.user.processes().filter((p) => comm(p) !== "sshd")) process.kill(pid, "SIGKILL");
		const log = followLog();
		expect(await follow(run.runDir, log).done).toEqual({ ended: true, failure: undefined });
		expect(log.end).toMatchObject({ state: "failed", error: "runner died" });
	});

	it("says why ssh failed (unreachable, changed host key) and comes back; the master carries no run tag", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		await installed();
		const fresh = { ...target, controlPath: controlPathFor(join(local, "store/targets/fresh")) };
		const check = () => callVerb(sshTransport(fresh), "check", [target.dir]);
		process.env.AGENT_BOARD_RUN_ID = "run-that-must-not-leak";
		try {
			await check();
		} finally {
			delete process.env.AGENT_BOARD_RUN_ID;
		}
		const master = spawnSync("ssh", ["-F", host.configFile, "-o", `ControlPath=${fresh.controlPath}`, "-O", "check", host.alias], { encoding: "utf8" });
		const pid = Number(/pid=(\d+)/.exec(master.stderr)?.[1]);
		expect(pid).toBeGreaterThan(1);
		expect(readFileSync(`/proc/${pid}/environ`, "utf8")).not.toContain("AGENT_BOARD_RUN_ID");

		await host.stop();
		await expect(check()).rejects.toMatchObject({ kind: "unreachable", message: expect.stringMatching(/^unreachable \(ssh: .*Connection refused\)$/) });
		await host.start();
		await expect(check()).resolves.toMatchObject({ node: { ok: true } });

		// A key the host does not accept: an auth failure, not "unreachable".
		const wrongKey = join(local, "wrong_key");
		spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", wrongKey]);
		const wrongConfig = join(local, "wrong_ssh_config");
		writeFileSync(wrongConfig, readFileSync(host.configFile, "utf8").replace(/IdentityFile .*/, `IdentityFile ${wrongKey}`));
		const wrong = { ...fresh, sshConfig: wrongConfig, controlPath: controlPathFor(join(local, "store/targets/wrong")) };
		await expect(callVerb(sshTransport(wrong), "check", [target.dir])).rejects.toMatchObject({ kind: "auth", message: expect.stringContaining("Permission denied (publickey)") });

		await host.changeHostKey();
		await expect(check()).rejects.toMatchObject({ kind: "host-key-changed", message: expect.stringContaining("has changed and you have requested strict checking") });
		host.trustHostKey();
		await expect(check()).resolves.toMatchObject({ node: { ok: true } });
	});
});

function comm(pid: number): string {
	try {
		return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
	} catch {
		return "";
	}
}
