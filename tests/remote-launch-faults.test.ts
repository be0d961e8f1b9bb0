/**
 * Remote launches that end instead of hanging (#24 items 1, 5, 6, #27), with a real sshd on 127.0.0.1
 * and a second Unix user as the host: a host with another pi and a host session over its limit fail the
 * row within seconds with the host's words, and leave no link or host-agent process; a stop during a
 * launch that hangs at the host ends the row; a --dir with less than the documented free space is
 * refused at launch; `targets add` refuses what would reach past the board (an image that is an engine
 * option, a network that joins another container, a --dir outside the login's home, a --max beyond
 * reason) and leaves nothing behind; and a target on this machine as this user (ssh to yourself) runs to
 * its end and stops without its far side ending the local link.
 */
import {
	chownSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	truncateSync,
	writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTargetsCommand } from "../src/board/subcommands/targets-command.ts";
import { parseSubcommand, runSubcommand } from "../src/board/subcommands/subcommands.ts";
import type { BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import type { ModelServer } from "../test-support/model-server.ts";
import { waitFor } from "../test-support/pi-harness.ts";
import { runTaggedProcs } from "../test-support/proc-scan.ts";
import { commandFails, requires, sshdMissing } from "../test-support/requires.ts";
import { startSshHost, type SshHost } from "../test-support/sshd.ts";
import { startSshBoard, type SshBoard } from "../test-support/ssh-board.ts";
import { procsMentioning } from "../test-support/target-helpers.ts";
import { sharedScratchRoot } from "../test-support/shared-scratch.ts";

const missing = sshdMissing();
let host: SshHost;
let model: ModelServer;
let local: string;
let repo: string;
let board: BoardEngine;
let fixture: SshBoard | undefined;
const mounts: string[] = [];

beforeAll(async () => {
	if (missing) return;
	fixture = await startSshBoard("pab-launch-faults-");
	({ host, model, local, repo, board } = fixture);
}, 180_000);

afterAll(async () => {
	if (missing) return;
	for (const mount of mounts) commandFails("umount", ["-l", mount]);
	await fixture?.cleanup();
});

/** A file in the host user's home, theirs. */
function hostFile(path: string, text: string, mode = 0o644): string {
	writeFileSync(path, text, { mode });
	chownSync(path, host.user.uid, host.user.gid);
	return path;
}

/** Nothing of the run is left here (its link, or anything it started) or at the host (host-agent, runner, worker). */
async function nothingLeft(row: BoardRow): Promise<void> {
	await waitFor(
		() => runTaggedProcs([row.currentRunId ?? ""]).length === 0 && procsMentioning(row.runDir ?? "").length === 0,
		"no local process of the run",
		30_000,
	);
	const onlySshd = () =>
		host.user.processes().every((pid) => readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "sshd");
	await waitFor(onlySshd, "nothing of the host user but its ssh sessions", 60_000);
}

describe("remote launches that end", () => {
	it("fails a row within seconds with the host's words when the host has another pi, and a stop on it answers", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		hostFile(join(host.user.home, "bin", "pi-old"), "#!/bin/sh\necho 1.5.0\n", 0o755);
		await board.targets.add("old", { kind: "ssh", host: host.alias, sshConfig: host.configFile, pi: "pi-old" });
		const dispatched = Date.now();
		const rows = await Promise.all(
			[1, 2].map((n) => board.dispatch({ prompt: `OLD-PI ${n} never runs`, cwd: repo, target: "old" })),
		);
		for (const row of rows) {
			const done = await waitDone(board, row.id, 90_000);
			console.log(
				`launch error on the host: row ${row.id} failed ${(done.endedAt ?? 0) - dispatched} ms after its dispatch`,
			);
			expect(done).toMatchObject({ state: "failed", errorCode: "start-failed" });
			expect(done.error).toMatch(/^cannot start on old: pi-old is pi 1\.5\.0; the board needs pi 1\.6\.x/);
			expect((await board.stop(row.id)).state).toBe("failed");
		}
		for (const row of rows) await nothingLeft(row);
	}, 180_000);

	it("fails a reply whose session on the host is over its limit, with the host's words, leaving nothing running", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		model.setScript({ rules: [{ match: "SESSION-", steps: [{ text: "Fine." }] }] });
		const row = await board.dispatch({ prompt: "SESSION-ONE first", cwd: repo, target: "h" });
		expect(await waitDone(board, row.id, 90_000)).toMatchObject({ state: "completed" });
		// The host's copy grows past what a session may be (sparse: no disk is used).
		const farSession = join(host.user.home, ".agent-board", "store", "sessions", row.id, `${row.id}.jsonl`);
		truncateSync(farSession, 2 * 1024 ** 3 + 1);
		expect((await board.reply(row.id, "SESSION-TWO again")).delivery).toBe("new-run");
		const done = await waitDone(board, row.id, 90_000);
		expect(done).toMatchObject({ state: "failed", errorCode: "session-too-large" });
		expect(done.error).toBe(
			`cannot start on h: session ${farSession} is 2.0 GiB, over the 1 GiB a session may be: it is not sent, mirrored or resumed`,
		);
		await nothingLeft(done);
		rmSync(farSession, { force: true });
	}, 180_000);

	it("ends a row stopped while its launch hangs at the host", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		// `--version` that never answers: the launch waits at the host until pi's check gives up (a minute).
		hostFile(
			join(host.user.home, "bin", "pi-stuck"),
			"#!/bin/sh\nexec node -e 'setTimeout(() => undefined, 600000)' pi-stuck\n",
			0o755,
		);
		await board.targets.add("stuck", { kind: "ssh", host: host.alias, sshConfig: host.configFile, pi: "pi-stuck" });
		const row = await board.dispatch({ prompt: "STUCK never runs", cwd: repo, target: "stuck" });
		await waitFor(
			() => procsMentioning("pi-stuck").length > 0 || undefined,
			"the launch to hang at the host",
			60_000,
		);
		const asked = Date.now();
		await board.stop(row.id);
		const done = await waitDone(board, row.id, 40_000);
		expect(done.state).toBe("stopped");
		console.log(`stop during a hung launch: stopped ${(done.endedAt ?? 0) - asked} ms after the stop`);
		await waitFor(() => runTaggedProcs([row.currentRunId ?? ""]).length === 0, "no local process of the run", 30_000);
		for (const { pid } of procsMentioning("pi-stuck")) process.kill(pid, "SIGKILL");
		await nothingLeft(done);
	}, 180_000);

	it("refuses a launch on a host whose --dir has less than the documented free space", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const small = mkdtempSync(join(sharedScratchRoot(), "pab-small-dir-"));
		requires(
			ctx,
			"a tmpfs mount",
			commandFails("mount", ["-t", "tmpfs", "-o", "size=64m,mode=0755", "tmpfs", small]),
		);
		mounts.unshift(small);
		chownSync(small, host.user.uid, host.user.gid);
		await board.targets.add("small", {
			kind: "ssh",
			host: host.alias,
			sshConfig: host.configFile,
			dir: small,
			dirAbsolute: true,
		});
		const row = await board.dispatch({ prompt: "SMALL never runs", cwd: repo, target: "small" });
		const done = await waitDone(board, row.id, 90_000);
		expect(done).toMatchObject({ state: "failed", errorCode: "disk-full" });
		expect(done.error).toMatch(
			new RegExp(
				`^cannot start on small: only [\\d.]+ MiB free in ${small}; a run there needs 1 GiB \\(free some space, or choose another --dir\\)$`,
			),
		);
		expect(existsSync(join(small, "store", "rows", row.id))).toBe(false);
		await nothingLeft(done);
	}, 180_000);

	it("targets add refuses what would reach past the board, with the reason, and leaves nothing behind", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const config = join(local, "store", "config.json");
		const before = readFileSync(config, "utf8");
		const outside = join(sharedScratchRoot(), `pab-outside-${process.pid}`);
		const refusals: [Record<string, unknown>, string][] = [
			[
				{ kind: "container", engine: "podman", image: "--volume=/:/hostroot" },
				`--image "--volume=/:/hostroot" starts with "-": an engine would read it as an option, not an image`,
			],
			[
				{ kind: "container", engine: "podman", image: "Not An Image" },
				`--image "Not An Image" is not an image reference`,
			],
			[
				{ kind: "container", engine: "podman", image: "w:1", network: "container:other" },
				`--network "container:other" joins another container's or process's namespaces`,
			],
			[{ kind: "ssh", host: host.alias, max: 257 }, "--max must be a whole number from 1 to 256 (got 257)"],
			[
				{ kind: "ssh", host: host.alias, dir: "../../../tmp/pab-escape" },
				`--dir "../../../tmp/pab-escape" leaves the login's home`,
			],
			[{ kind: "ssh", host: host.alias, dir: outside }, `--dir "${outside}" is absolute: give --dir-absolute too`],
		];
		for (const [input, words] of refusals)
			await expect(board.targets.add("bad", { kind: String(input.kind), ...input })).rejects.toThrow(words);
		expect(readFileSync(config, "utf8")).toBe(before);
		expect(existsSync(join(local, "store", "targets", "bad"))).toBe(false);
		// The command line says the same, and takes --dir-absolute as a flag without a value.
		expect(parseTargetsCommand(`add x --ssh ${host.alias} --dir ${outside} --dir-absolute --max 2`)).toEqual({
			ok: true,
			action: "add",
			name: "x",
			input: { kind: "ssh", host: host.alias, dir: outside, dirAbsolute: true, max: 2 },
		});
		// With --dir-absolute the directory outside the home is used, and check --install creates it there.
		mkdirSync(outside, { recursive: true });
		chownSync(outside, host.user.uid, host.user.gid);
		await board.targets.add("abs", {
			kind: "ssh",
			host: host.alias,
			sshConfig: host.configFile,
			dir: join(outside, "board"),
			dirAbsolute: true,
		});
		expect((await board.targets.list()).find((t) => t.name === "abs")?.where).toContain(join(outside, "board"));
		expect((await board.targets.check("abs", { install: true })).ok).toBe(true);
		expect(existsSync(join(outside, "board", "pkg"))).toBe(true);
		expect(JSON.parse(readFileSync(config, "utf8")).targets.abs).toEqual({
			kind: "ssh",
			host: host.alias,
			sshConfig: host.configFile,
			dir: join(outside, "board"),
			max: 4,
			env: [],
		});
		rmSync(outside, { recursive: true, force: true });
	}, 120_000);
});

describe("what a user typed, echoed back", () => {
	it("never carries a raw escape from an id into the no-row message", async (ctx) => {
		requires(ctx, "sshd and a second Unix user", missing);
		const typed = "\x1b]0;pwned\x07\x1b[2Jnope\x9b31m";
		const parsed = parseSubcommand(`show ${typed}`);
		if (!parsed.ok) throw new Error("show did not parse");
		const said = await runSubcommand(board, parsed, repo).then(
			() => "",
			(error: Error) => error.message,
		);
		expect(said).toBe('no row "\\u001b]0;pwned\\u0007\\u001b[2Jnope\\u009b31m" (see /agent-board list --all)');
		for (const refused of [
			await board.stop(typed).then(
				() => "",
				(error: Error) => error.message,
			),
			await board.get(typed).then(
				() => "",
				(error: Error) => error.message,
			),
		]) {
			expect(refused).toContain('"\\u001b]0;pwned\\u0007\\u001b[2Jnope\\u009b31m"');
			expect(refused).not.toMatch(/[\x1b\x07\x9b]/);
		}
	});
});

describe("a target on this machine as this user", () => {
	let self: SshHost;
	afterAll(async () => {
		await self?.cleanup();
	});

	it("runs to its end and stops without its far side ending the local link", async (ctx) => {
		requires(ctx, "sshd", missing);
		self = await startSshHost({ self: true, alias: "pab-self" });
		self.user.writePiConfig({ models: model.modelsJson(), auth: model.authJson(), settings: model.settingsJson() });
		const far = join(self.user.home, "far");
		await board.targets.add("me", {
			kind: "ssh",
			host: self.alias,
			sshConfig: self.configFile,
			dir: far,
			dirAbsolute: true,
		});
		model.setScript({
			rules: [
				{
					match: "SELF-DONE",
					steps: [
						{ toolCall: { name: "bash", args: { command: "echo mine > self.txt" } } },
						{ text: "Wrote it." },
					],
				},
				{
					match: "SELF-STALL",
					steps: [{ toolCall: { name: "bash", args: { command: "sleep 300" } } }, { text: "never" }],
				},
			],
		});
		// The far runner ends every process of its run when it finishes: never the link here.
		const row = await board.dispatch({ prompt: "SELF-DONE write a file", cwd: repo, target: "me" });
		const running = await waitFor(async () => {
			const now = await board.get(row.id);
			return now?.alive && now.runDir && existsSync(join(now.runDir, "runner.json")) ? now : undefined;
		}, "the link to run");
		const link = JSON.parse(readFileSync(join(running.runDir ?? "", "runner.json"), "utf8")) as { pid: number };
		const done = await waitDone(board, row.id, 90_000);
		expect(done).toMatchObject({ state: "completed", latestAssistant: "Wrote it." });
		expect(readFileSync(join(done.worktreePath ?? "", "self.txt"), "utf8")).toBe("mine\n");
		expect(JSON.parse(readFileSync(join(done.runDir ?? "", "runner.json"), "utf8")).pid).toBe(link.pid);
		expect(existsSync(join(done.runDir ?? "", "link-respawns.json"))).toBe(false);

		// A stop ends the far run (its runner ends everything it started) and the link records it.
		const stalled = await board.dispatch({ prompt: "SELF-STALL wait", cwd: repo, target: "me" });
		const tooling = await waitFor(
			async () => {
				const now = await board.get(stalled.id);
				return now?.live?.tool?.name === "bash" ? now : undefined;
			},
			"the tool to run at the target",
			60_000,
		);
		const stallLink = JSON.parse(readFileSync(join(tooling.runDir ?? "", "runner.json"), "utf8")) as { pid: number };
		const asked = Date.now();
		await board.stop(stalled.id);
		expect(await waitDone(board, stalled.id, 60_000)).toMatchObject({ state: "stopped" });
		console.log(`ssh to oneself: stopped ${Date.now() - asked} ms after the stop`);
		expect(JSON.parse(readFileSync(join(tooling.runDir ?? "", "runner.json"), "utf8")).pid).toBe(stallLink.pid);
		expect(existsSync(join(tooling.runDir ?? "", "link-respawns.json"))).toBe(false);
		await waitFor(
			() => runTaggedProcs([stalled.currentRunId ?? "", `${stalled.currentRunId}@far`]).length === 0,
			"no process of the run on either side",
			30_000,
		);
	}, 240_000);
});
