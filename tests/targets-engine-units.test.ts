/**
 * The board side of targets without a target: config.json (limits read by the queue, changes under
 * its lock, shape errors naming path and field), target input and run.json snapshots checked, the
 * queue per target (FIFO within a target, a full target not blocking others, a removed target failing
 * its entry), target slots held while their run is not over, and the link's mirror and inbox.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readBoardConfig, readLimits, updateBoardConfig } from "../runner/life/board-config.mjs";
import { dropMessage, inboxNames } from "../runner/life/inbox.mjs";
import { processStartTime } from "../runner/store/proc.mjs";
import { enqueue, pumpQueue } from "../runner/life/queue.mjs";
import { liveSlots, tryClaimSlot } from "../runner/life/slots.mjs";
import { openInbox } from "../runner/link/link-inbox.mjs";
import { openMirror } from "../runner/link/link-mirror.mjs";
import { initialStatus, statusError } from "../runner/life/state-rules.mjs";
import { targetError, targetFromInput } from "../runner/kinds/kinds.mjs";
import { formatCheck, formatTargets, parseTargetsCommand } from "../src/board/subcommands/targets-command.ts";
import { piChecked, piCheckedAsync } from "../runner/far/pi-check.mjs";
import { waitFor } from "../test-support/wait.ts";

const dirs: string[] = [];
function scratch(): string {
	const dir = mkdtempSync(join(tmpdir(), "pab-tunits-"));
	dirs.push(dir);
	return dir;
}
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

const ssh = { kind: "ssh" as const, host: "dev", dir: ".agent-board", max: 2, env: [] as string[] };

describe("board config", () => {
	it("is empty when missing, changes under its lock, and a wrong file names its path and field for the engine and the queue", async () => {
		const store = scratch();
		expect(readBoardConfig(store)).toEqual({ version: 1, targets: {} });
		expect(readLimits(store)).toEqual({ targets: new Map(), groups: new Map(), configs: new Map() });
		// Two changes at once: neither is lost.
		await Promise.all([
			updateBoardConfig(store, (c) => (c.maxRunning = 3)),
			updateBoardConfig(store, (c) => (c.targets.dev = { ...ssh, env: [] })),
		]);
		expect(readBoardConfig(store)).toEqual({ version: 1, maxRunning: 3, targets: { dev: { ...ssh, env: [] } } });
		expect(readLimits(store)).toEqual({
			local: 3,
			targets: new Map([["dev", 2]]),
			groups: new Map(),
			configs: new Map([["dev", { ...ssh, env: [] }]]),
		});
		await expect(updateBoardConfig(store, (c) => (c.targets.dev = { ...ssh, max: 0 }))).rejects.toThrow(
			`${join(store, "config.json")}: /targets/dev/max`,
		);
		expect(readBoardConfig(store).targets.dev?.max).toBe(2);

		writeFileSync(
			join(store, "config.json"),
			JSON.stringify({ version: 1, targets: { dev: { ...ssh, max: "two" } } }),
		);
		expect(() => readBoardConfig(store)).toThrow(`${join(store, "config.json")}: /targets/dev/max`);
		expect(readLimits(store).error).toBe(
			`${join(store, "config.json")}: /targets/dev/max must be a whole number >= 1`,
		);
		writeFileSync(join(store, "config.json"), "{");
		expect(readLimits(store).error).toMatch(/config\.json: invalid JSON/);
		writeFileSync(join(store, "config.json"), JSON.stringify({ version: 1, targets: { local: ssh } }));
		expect(() => readBoardConfig(store)).toThrow("config.json: /targets/local is not a target name");
		expect(readLimits(store).error).toContain("/targets/local is not a target name");
		writeFileSync(join(store, "config.json"), JSON.stringify({ version: 1, targets: { "Bad Name": ssh } }));
		expect(() => readBoardConfig(store)).toThrow("config.json: /targets");
	});

	it("checks a target as it is added and as its run carries it", () => {
		expect(
			targetFromInput({ kind: "ssh", host: "me@dev", pi: "node /opt/pi/cli.js", env: ["A", "A", "B_2"] }),
		).toEqual({
			kind: "ssh",
			host: "me@dev",
			dir: ".agent-board",
			pi: ["node", "/opt/pi/cli.js"],
			max: 4,
			env: ["A", "B_2"],
		});
		expect(() => targetFromInput({ kind: "ssh", host: "-oProxyCommand=x" })).toThrow("not an ssh host");
		expect(() => targetFromInput({ kind: "ssh", host: "dev", env: ["A=secret"] })).toThrow(
			"--env takes a variable's name, not its value",
		);
		expect(() => targetFromInput({ kind: "ssh", host: "dev", max: 0 })).toThrow(
			"--max must be a whole number from 1 to 256",
		);
		expect(() => targetFromInput({ kind: "ssh", host: "dev", sshConfig: "/no/such/file" })).toThrow(
			"--ssh-config: no such file",
		);
		expect(
			targetFromInput({
				kind: "container",
				engine: "podman",
				image: "w:1",
				cpus: 1.5,
				memory: "2g",
				network: "none",
			}),
		).toEqual({
			kind: "container",
			engine: "podman",
			image: "w:1",
			network: "none",
			max: 4,
			env: [],
			cpus: 1.5,
			memory: "2g",
		});
		expect(() => targetFromInput({ kind: "container", engine: "lxc", image: "w" })).toThrow(
			"--container takes docker or podman",
		);
		expect(targetFromInput({ kind: "container", engine: "docker", image: "w", engineHost: "ssh://me@box" })).toEqual({
			kind: "container",
			engine: "docker",
			image: "w",
			engineHost: "ssh://me@box",
			max: 4,
			env: [],
		});
		expect(() => targetFromInput({ kind: "container", engine: "docker", image: "w", engineHost: "--url=x" })).toThrow(
			"the engine would read it as an option",
		);
		expect(() =>
			targetFromInput({
				kind: "container",
				engine: "docker",
				image: "w",
				engineHost: "ssh://box",
				engineIdentity: "/etc/hostname",
			}),
		).toThrow("--engine-identity is podman's");
		expect(() => targetFromInput({ kind: "container", engine: "docker", image: "w", memory: "lots" })).toThrow(
			"--memory must be a size",
		);

		expect(targetError({ ...ssh, name: "dev" }, { named: true })).toBeUndefined();
		expect(targetError({ ...ssh, name: "local" }, { named: true })).toBe("/name is not a target name");
		expect(targetError({ ...ssh, name: "dev", host: "" }, { named: true })).toBe("/host must be a non-empty string");
		expect(targetError({ ...ssh, name: "dev", env: ["X=1"] }, { named: true })).toBe(
			"/env must be a list of variable names",
		);
		expect(
			targetError({ kind: "container", name: "box", engine: "lxc", image: "w", max: 1, env: [] }, { named: true }),
		).toBe("/engine must be one of docker, podman");
		expect(targetError({ kind: "vm", name: "x", max: 1, env: [] }, { named: true })).toBe(
			"/kind must be ssh, container or pool",
		);
	});
});

/** A queued run dir whose run.json is not a run's: whatever the queue starts for it fails at once and frees its slot. */
function queuedRun(store: string, rowId: string, target?: string): string {
	const runId = `run-${rowId}`;
	const runDir = join(store, "rows", rowId, "runs", runId);
	mkdirSync(runDir, { recursive: true });
	writeFileSync(join(runDir, "status.json"), JSON.stringify(initialStatus(runId, rowId, Date.now())));
	writeFileSync(join(runDir, "run.json"), "{}");
	enqueue(store, { rowId, runId, ...(target ? { target } : {}) });
	return runDir;
}

const claimed = (runDir: string) => readdirSync(runDir).includes("claim.json");

describe("queue per target", () => {
	it("starts FIFO within each target, a full target does not hold others back, a removed target fails its entry with the reason", async () => {
		const store = scratch();
		await updateBoardConfig(store, (c) => (c.targets.t = { ...ssh, max: 1 }));
		// A live claimer of t's only slot whose run is not over: t is full.
		mkdirSync(join(store, "targets", "t", "slots"), { recursive: true });
		writeFileSync(
			join(store, "targets", "t", "slots", "slot-0.json"),
			JSON.stringify({ pid: process.pid, start: processStartTime(process.pid), runId: "busy", rowId: "busy" }),
		);
		const t1 = queuedRun(store, "t1", "t");
		const gone = queuedRun(store, "g1", "gone");
		const l1 = queuedRun(store, "l1");
		const t2 = queuedRun(store, "t2", "t");
		const result = pumpQueue(store, { maxConcurrent: 1, node: process.execPath, env: process.env });
		expect(result).toEqual({ started: ["run-l1"] });
		expect([claimed(t1), claimed(gone), claimed(l1), claimed(t2)]).toEqual([false, true, true, false]);
		// FIFO is per target: t1, older and waiting on its full target, is not an older entry of l1's.
		expect(JSON.parse(readFileSync(join(l1, "claim.json"), "utf8"))).toMatchObject({
			purpose: "start",
			olderWaiting: 0,
		});
		expect(JSON.parse(readFileSync(join(gone, "status.json"), "utf8"))).toMatchObject({
			state: "failed",
			error: "target gone does not exist any more (it was removed while this run waited)",
		});
		await waitFor(
			() => JSON.parse(readFileSync(join(l1, "status.json"), "utf8")).endedAt,
			"the local run's runner to refuse its missing run.json",
		);
	});

	it("keeps a target slot while its run is not over, though its link and processes are gone", () => {
		const store = scratch();
		const slots = join(store, "slots");
		mkdirSync(slots);
		const dead = { pid: 999_999, start: "1", runId: "r", rowId: "w" };
		writeFileSync(join(slots, "slot-0.json"), JSON.stringify(dead));
		let over = false;
		const holds = () => !over;
		expect(liveSlots(slots, 1, holds)).toBe(1);
		expect(
			tryClaimSlot(slots, 1, { pid: process.pid, start: processStartTime(process.pid), runId: "next" }, holds),
		).toBeUndefined();
		over = true;
		expect(
			tryClaimSlot(slots, 1, { pid: process.pid, start: processStartTime(process.pid), runId: "next" }, holds),
		).toBe(join(slots, "slot-0.json"));
	});
});

describe("the link's mirror", () => {
	const status = () => initialStatus("run-1", "row-1", 1);

	it("mirrors statuses that name its run, events once by seq, session bytes at their offset; the end only when it is recorded", () => {
		const runDir = scratch();
		const sessionFile = join(runDir, "session.jsonl");
		const mirror = openMirror({
			storeDir: runDir,
			rowId: "row-1",
			runId: "run-1",
			runDir,
			sessionFile,
			target: "dev",
			status: status(),
		});
		mirror.begin();
		const local = () => JSON.parse(readFileSync(join(runDir, "status.json"), "utf8"));
		expect(local()).toMatchObject({ state: "working", summary: "Starting on dev", link: { target: "dev" } });

		expect(statusError({ ...status(), runId: "other" }, { runId: "run-1", rowId: "row-1" })).toBe(
			"names run other of row row-1, not run-1 of row-1",
		);
		expect(statusError({ ...status(), state: "sleeping" }, { runId: "run-1", rowId: "row-1" })).toBe(
			"/state is not a run state",
		);
		expect(mirror.setStatus({ ...status(), summary: 7 })).toBe(
			"dev sent a status that cannot be used: /summary must be string",
		);
		expect(mirror.setStatus({ ...status(), state: "working", summary: "Running ls" })).toBeUndefined();
		expect(local()).toMatchObject({ summary: "Running ls", link: { target: "dev" } });
		// A terminal status waits for the end: readers take it as done.
		mirror.setStatus({ ...status(), state: "completed", endedAt: 5, summary: "Done" });
		expect(local().summary).toBe("Running ls");

		const line = (seq: number) => JSON.stringify({ seq, at: seq, type: "turn_end" });
		expect([
			mirror.event(1, line(1)),
			mirror.event(1, line(1)),
			mirror.event(2, "{x"),
			mirror.event(2, line(3)),
			mirror.event(2, line(2)),
		]).toEqual([undefined, undefined, "event 2 is not JSON", "event 2 has the wrong shape", undefined]);
		expect(readFileSync(join(runDir, "events.jsonl"), "utf8")).toBe(`${line(1)}\n${line(2)}\n`);
		expect(mirror.lastSeq).toBe(2);

		const b64 = (text: string) => Buffer.from(text).toString("base64");
		expect(mirror.session(0, b64("abc"))).toBe(true);
		expect(mirror.session(1, b64("bcde"))).toBe(true);
		expect(mirror.session(9, b64("zz"))).toBe(false);
		expect(readFileSync(sessionFile, "utf8")).toBe("abcde");
		expect(mirror.session(0, b64("new"), true)).toBe(true);
		expect(readFileSync(sessionFile, "utf8")).toBe("new");
		expect(mirror.sessionBytes()).toBe(3);

		mirror.unreachable("unreachable (ssh: Connection refused)", 100);
		mirror.unreachable("unreachable (ssh: No route to host)", 200);
		expect(local().link).toEqual({
			target: "dev",
			unreachableSince: 100,
			reason: "unreachable (ssh: No route to host)",
		});
		mirror.reachable();
		expect(local().link).toEqual({ target: "dev" });

		const final = mirror.end({ ...status(), state: "completed", endedAt: 9, summary: "Done" });
		expect(final).toMatchObject({ state: "completed", endedAt: 9, link: { target: "dev" } });
		const reopened = openMirror({
			storeDir: runDir,
			rowId: "row-1",
			runId: "run-1",
			runDir,
			sessionFile,
			target: "dev",
			status: status(),
		});
		expect(reopened.lastSeq).toBe(2);
		expect(reopened.end({ ...status(), state: "completed" })).toMatchObject({
			state: "failed",
			error: "dev ended the run with a status that cannot be used: /endedAt missing",
		});
	});

	it("forwards the inbox on each connection, moves a message to claimed/ when its receipt is back, answers what it cannot forward", async () => {
		const runDir = scratch();
		let stops = 0;
		const inbox = openInbox(runDir, { onStop: () => (stops += 1) });
		const first = dropMessage(runDir, { kind: "message", text: "steer me", deliverAs: "steer" });
		writeFileSync(join(runDir, "inbox", "zz-bad.json"), "{nope");
		const sent: string[] = [];
		inbox.attach((message) => sent.push(String(message.id)));
		expect(sent).toEqual([first]);
		expect(JSON.parse(readFileSync(join(runDir, "receipts", "zz-bad.json"), "utf8"))).toMatchObject({
			status: "rejected",
			code: "malformed",
		});
		// A new connection sends again what has no receipt yet.
		inbox.detach();
		const stop = dropMessage(runDir, { kind: "stop" });
		await waitFor(() => stops > 0, "the stop to be noticed");
		expect(inbox.stopWaiting()).toBe(true);
		inbox.attach((message) => sent.push(String(message.id)));
		expect(sent).toEqual([first, first, stop]);
		inbox.served(first);
		expect(inboxNames(runDir)).toEqual([`${stop}.json`]);
		expect(readdirSync(join(runDir, "claimed")).sort()).toEqual([`${first}.json`, "zz-bad.json"].sort());
		const left = dropMessage(runDir, { kind: "message", text: "too late" });
		inbox.finish();
		expect(JSON.parse(readFileSync(join(runDir, "receipts", `${stop}.json`), "utf8"))).toMatchObject({
			status: "delivered",
		});
		expect(JSON.parse(readFileSync(join(runDir, "receipts", `${left}.json`), "utf8"))).toMatchObject({
			status: "rejected",
			code: "run-ended",
		});
	});
});

describe("targets subcommand", () => {
	it("parses add, check and remove, refusing what does not fit before anything runs", () => {
		expect(parseTargetsCommand("")).toEqual({ ok: true, action: "list" });
		expect(
			parseTargetsCommand(
				`add dev --ssh me@dev --ssh-config ~/.ssh/cfg --dir work/ab --pi "node /opt/pi/cli.js" --max 3 --env A --env B`,
			),
		).toEqual({
			ok: true,
			action: "add",
			name: "dev",
			input: {
				kind: "ssh",
				host: "me@dev",
				sshConfig: "~/.ssh/cfg",
				dir: "work/ab",
				pi: "node /opt/pi/cli.js",
				max: 3,
				env: ["A", "B"],
			},
		});
		expect(
			parseTargetsCommand("add box --container podman --image w:1 --network none --cpus 1.5 --memory 2g"),
		).toEqual({
			ok: true,
			action: "add",
			name: "box",
			input: { kind: "container", engine: "podman", image: "w:1", network: "none", cpus: 1.5, memory: "2g" },
		});
		expect(parseTargetsCommand("check dev --install")).toEqual({
			ok: true,
			action: "check",
			name: "dev",
			install: true,
		});
		expect(parseTargetsCommand("remove dev")).toEqual({ ok: true, action: "remove", name: "dev" });
		const errors = [
			"add",
			"add dev",
			"add dev --ssh a --container docker --image x",
			"add dev --ssh a --image x",
			"add dev --container docker",
			"add dev --ssh a --max two",
			"add dev --ssh a --dir",
			"add dev --ssh a --bogus 1",
			"check",
			"remove dev --force",
			"rename dev",
			`add dev --ssh "a`,
		];
		expect(errors.map((args) => parseTargetsCommand(args))).toEqual([
			{ ok: false, error: "targets add needs a name" },
			{
				ok: false,
				error: "targets add needs exactly one of --ssh <host>, --container docker|podman or --pool <target>,<target>,...",
			},
			{
				ok: false,
				error: "targets add needs exactly one of --ssh <host>, --container docker|podman or --pool <target>,<target>,...",
			},
			{ ok: false, error: "targets add --ssh: --image is for container targets" },
			{ ok: false, error: "targets add --container needs --image <image>" },
			{ ok: false, error: '--max needs a number, got "two"' },
			{ ok: false, error: "targets add: --dir needs a value" },
			{ ok: false, error: 'targets add: unknown option "--bogus"' },
			{ ok: false, error: "targets check needs a target's name" },
			{ ok: false, error: 'targets remove: unexpected "--force"' },
			{ ok: false, error: 'targets: unknown action "rename" (add, check, remove, set, drain, undrain)' },
			{ ok: false, error: 'targets: unclosed " quote' },
		]);
	});

	it("prints targets and a check's verdict with the fix under each failure, sanitised", () => {
		const since = new Date(2026, 0, 1, 9, 5, 7).getTime();
		expect(
			formatTargets([
				{ name: "local", kind: "local", where: "this machine", max: 4, running: 1, queued: 0 },
				{
					name: "dev",
					kind: "ssh",
					where: "ssh dev (dir .agent-board)",
					max: 2,
					running: 2,
					queued: 3,
					unreachable: { since, reason: "unreachable (ssh: Connection refused)\u001b[2J" },
				},
				{
					name: "box",
					kind: "ssh",
					where: "ssh box (dir .agent-board)",
					max: 4,
					running: 1,
					queued: 0,
					load: { load: 0.5, cpus: 2, at: since },
					takes: { ok: false, why: "failing its check: pi: not found" },
				},
			]),
		).toBe(
			[
				"TARGET  WHERE                       RUNNING  QUEUED  LOAD    STATE",
				"local   this machine                1/4      0       -       ok",
				"dev     ssh dev (dir .agent-board)  2/2      3       -       unreachable since 09:05:07: unreachable (ssh: Connection refused)",
				"box     ssh box (dir .agent-board)  1/4      0       0.50/2  failing its check: pi: not found",
			].join("\n"),
		);
		expect(
			formatCheck({
				target: "dev",
				ok: false,
				items: [
					{ name: "node", ok: true, detail: "node v22.19.0" },
					{ name: "pi", ok: false, detail: "pi: not found on PATH", fix: "install pi 1.6" },
				],
			}),
		).toBe(
			// Names take 11 columns at least, so the lines a check shows as it goes line up with its report.
			[
				"ok    node         node v22.19.0",
				"FAIL  pi           pi: not found on PATH",
				"                   fix: install pi 1.6",
				"dev: not ready (1 problem)",
			].join("\n"),
		);
	});

	it("asks pi its version once per command and executable, and says why another version will not do", () => {
		const dir = scratch();
		const bin = join(dir, "bin");
		mkdirSync(bin);
		const calls = join(dir, "calls");
		writeFileSync(join(bin, "pi"), `#!/bin/sh\necho x >> ${calls}\necho 1.5.3\n`, { mode: 0o755 });
		const path = process.env.PATH;
		process.env.PATH = `${bin}:${path ?? ""}`;
		try {
			const first = piChecked(dir, ["pi"]);
			expect(first).toEqual({
				ok: false,
				reason: "pi is pi 1.5.3; the board needs pi 1.6.x (install it, or name another with --pi <command>)",
			});
			expect(piChecked(dir, ["pi"])).toEqual(first);
			expect(readFileSync(calls, "utf8")).toBe("x\n");
			writeFileSync(join(bin, "pi"), `#!/bin/sh\necho 1.6.0\n`, { mode: 0o755 });
			expect(piChecked(dir, ["pi"])).toEqual({ ok: true, version: "1.6.0" });
			expect(piChecked(dir, ["no-such-pi"])).toEqual({
				ok: false,
				reason:
					"pi not found: no-such-pi is not on this host's non-interactive PATH (install pi 1.6, or name it with --pi <command>)",
			});
		} finally {
			process.env.PATH = path;
		}
	});

	it("asks pi its version once for a burst of launches at a new host (the link's channel asks for all of them at once)", async () => {
		const dir = scratch();
		const bin = join(dir, "bin");
		mkdirSync(bin);
		const calls = join(dir, "calls");
		writeFileSync(join(bin, "pi"), `#!/bin/sh\necho x >> ${calls}\nsleep 0.2\necho 1.6.0\n`, { mode: 0o755 });
		const path = process.env.PATH;
		process.env.PATH = `${bin}:${path ?? ""}`;
		try {
			const answers = await Promise.all(Array.from({ length: 8 }, () => piCheckedAsync(dir, ["pi"])));
			expect(answers).toEqual(Array.from({ length: 8 }, () => ({ ok: true, version: "1.6.0" })));
			expect(readFileSync(calls, "utf8")).toBe("x\n");
		} finally {
			process.env.PATH = path;
		}
	});
});
