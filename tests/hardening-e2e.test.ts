/**
 * Hostile and broken stores against the real pi (`pi -p "/agent-board ..."`): wrong-shaped files,
 * escape sequences in a model answer, the pid-1 record, a foreign or world-writable store, EACCES,
 * a read-only store and a full disk. pi must stay up, name the file, field, path and errno, and
 * leave the files as they were.
 */
import { spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { processStartTime } from "../runner/store/proc.mjs";
import { storePaths } from "../src/board/engine/paths.ts";
import { createBoardService } from "../src/board/engine/service.ts";
import { waitDone } from "../test-support/board-helpers.ts";
import { fileSnapshot, TERMINAL_CONTROL, writeRow } from "../test-support/hardening-fixtures.ts";
import {
	createTestAgent,
	EXTENSION_ENTRY,
	PI_CLI,
	runPi,
	type PiRunResult,
	type TestAgent,
} from "../test-support/pi-harness.ts";
import { commandFails, notRoot, requires } from "../test-support/requires.ts";

const agents: TestAgent[] = [];
const mounts: string[] = [];
afterAll(() => {
	for (const mount of mounts.reverse()) commandFails("umount", ["-l", mount]);
	for (const agent of agents) agent.cleanup();
});

function agentWithStore(text = "Done.") {
	const agent = createTestAgent({ script: { rules: [], fallback: [{ text }] } });
	agents.push(agent);
	const store = join(agent.agentDir, "agent-board");
	mkdirSync(join(store, "rows"), { recursive: true, mode: 0o700 });
	return { agent, store, paths: storePaths(store) };
}

const board =
	(agent: TestAgent) =>
	(args: string, wrap?: string[]): Promise<PiRunResult> =>
		wrap
			? runWrapped(agent, wrap, ["-p", `/agent-board ${args}`.trim()])
			: runPi(agent, { args: ["-p", `/agent-board ${args}`.trim()] });

/** Runs pi under a wrapper command (setpriv) with the harness's isolation. */
function runWrapped(agent: TestAgent, wrap: string[], args: string[]): Promise<PiRunResult> {
	return new Promise((resolve, reject) => {
		const [command = "", ...rest] = wrap;
		const child = spawn(command, [...rest, process.execPath, PI_CLI, "-e", EXTENSION_ENTRY, ...args], {
			cwd: agent.cwd,
			env: agent.env,
			stdio: ["ignore", "pipe", "pipe"],
		});
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
		child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
		const timer = setTimeout(() => {
			child.kill("SIGKILL");
			reject(new Error(`wrapped pi did not exit\n${stderr}`));
		}, 45_000);
		child.on("error", reject);
		child.on("close", (code, signal) => {
			clearTimeout(timer);
			resolve({ code, signal, stdout, stderr, events: [] });
		});
	});
}

describe("hardening against the real pi", { timeout: 120_000 }, () => {
	it("lists and shows wrong-shaped rows as error rows naming the field, and touches no file", async () => {
		const { agent, store, paths } = agentWithStore();
		const cases: Record<
			string,
			{ meta?: Record<string, unknown>; status?: Record<string, unknown>; reason: string }
		> = {
			"name-42": { meta: { name: 42 }, reason: "meta.json: /name must be string" },
			"attempt-str": { meta: { attempt: "2 of 3" }, reason: "meta.json: /attempt must be object" },
			"summary-42": { status: { summary: 42 }, reason: "status.json: /summary must be string" },
			"usage-x": { status: { usage: "x" }, reason: "status.json: /usage must be object" },
			"events-1": { status: { recentEvents: [1] }, reason: "status.json: /recentEvents/0 must be object" },
			"question-42": {
				status: { state: "needs_input", question: 42 },
				reason: "status.json: /question must be string",
			},
			"state-bogus": {
				status: { state: "bogus" },
				reason: "status.json: /state must be equal to one of the allowed values",
			},
		};
		for (const [id, spec] of Object.entries(cases))
			writeRow(paths, id, { metaPatch: spec.meta, statusPatch: spec.status });
		writeRow(paths, "fine-row");
		const before = fileSnapshot(store);

		const list = await board(agent)("list");
		expect(list.code, list.stderr).toBe(0);
		expect(list.stdout).toMatch(/^fine-row\s+completed\s/m);
		for (const [id, spec] of Object.entries(cases)) {
			expect(list.stdout, id).toMatch(new RegExp(`^${id}\\s+error\\s`, "m"));
			const shown = await board(agent)(`show ${id}`);
			expect(shown.code, shown.stderr).toBe(0);
			expect(shown.stdout, id).toContain(`error:     ${spec.reason}`);
		}
		expect(fileSnapshot(store)).toEqual(before);
	});

	it("never lets escape sequences in a model answer reach list or show output", async () => {
		const hostile =
			"Clipboard \x1b]52;c;cm0gLXJmIH4=\x07 title \x1b]0;pwned\x1b\\ clear \x1b[2J\x1b[H link \x1b]8;;https://evil.example\x1b\\here\x1b]8;;\x1b\\ done.\nSecond line \u202eevil\u202c bell\x07.";
		const { agent, store } = agentWithStore(hostile);
		const dispatched = await board(agent)("dispatch print something hostile");
		expect(dispatched.code, dispatched.stderr).toBe(0);
		const id = /^dispatched (\S+)/m.exec(dispatched.stdout)?.[1];
		expect(id, dispatched.stdout + dispatched.stderr).toBeDefined();
		const engine = createBoardService({ storeDir: store, env: agent.env, piCommand: [process.execPath, PI_CLI] });
		const done = await waitDone(engine, id!);
		expect(done.state).toBe("completed");
		// The raw store really holds the sequences: the test fails if the model text were not hostile.
		expect(readFileSync(join(done.runDir!, "status.json"), "utf8")).toContain("\\u001b]52;c;");

		const list = await board(agent)("list");
		const shown = await board(agent)(`show ${id}`);
		for (const [what, out] of [
			["list", list.stdout],
			["show", shown.stdout],
		] as const) {
			expect(out, what).not.toMatch(TERMINAL_CONTROL);
			expect(out, what).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
			expect(out, what).not.toContain("cm0gLXJmIH4=");
			expect(out, what).toContain("Clipboard");
		}
		expect(list.stdout).toMatch(new RegExp(`^${id}\\s+completed\\s.*Clipboard title clear link here done\\.`, "m"));
		expect(shown.stdout).toContain(
			"latest:    Clipboard  title  clear  link here done.\n           Second line \ufffdevil\ufffd bell\u2407.",
		);

		// Retention through the real command: the archived row's only run is its current one and stays.
		expect((await board(agent)(`archive ${id}`)).code).toBe(0);
		const gcRun = await board(agent)("gc --dry-run");
		expect(gcRun.code, gcRun.stderr).toBe(0);
		expect(gcRun.stdout).toMatch(
			/^gc: would free 0 B in 0 files from 0 runs of 1 archived row \(runs ended over 14 days ago, newest 1 kept\)$/m,
		);
		expect(existsSync(join(done.runDir!, "events.jsonl"))).toBe(true);
	});

	it("never signals pid 1 or its group for a planted {pid:1} runner or worker record", async () => {
		const { agent, store, paths } = agentWithStore();
		const old = Date.now() - 60 * 60 * 1000;
		const initStart = processStartTime(1);
		const rows = [
			writeRow(paths, "pid-one", { state: "working", at: old }),
			writeRow(paths, "pid-one-start", { state: "working", at: old }),
		];
		writeFileSync(join(rows[0]!.runDir, "runner.json"), '{"pid":1}');
		writeFileSync(join(rows[0]!.runDir, "worker.json"), '{"pid":1}');
		writeFileSync(join(rows[1]!.runDir, "runner.json"), JSON.stringify({ pid: 1, start: initStart }));
		writeFileSync(join(rows[1]!.runDir, "worker.json"), JSON.stringify({ pid: 1, start: initStart }));
		const signalled: Array<[number, string | number | undefined]> = [];
		const real = process.kill.bind(process);
		const kill = vi.spyOn(process, "kill").mockImplementation((pid: number, signal?: string | number) => {
			signalled.push([pid, signal]);
			// Never let a regression actually send the signal: kill(-1) would take the machine's test run down.
			if (Math.abs(pid) === 1) return true;
			return real(pid, signal);
		});
		try {
			const engine = createBoardService({ storeDir: store, env: agent.env, piCommand: ["pi"] });
			const listed = await engine.list();
			for (const row of listed) expect(row.state, row.id).toBe("failed");
			await engine.stop("pid-one").catch(() => undefined);
		} finally {
			kill.mockRestore();
		}
		expect(signalled.filter(([pid]) => Math.abs(pid) === 1)).toEqual([]);
	});

	it("refuses a world-writable store with a clear error", async () => {
		const { agent, store, paths } = agentWithStore();
		writeRow(paths, "some-row");
		chmodSync(store, 0o777);
		const open = await board(agent)("list");
		expect(open.code).toBe(1);
		expect(open.stderr).toContain(`refusing store ${store}: writable by group or others (mode 0777)`);
		chmodSync(store, 0o700);
		expect(readdirSync(paths.rows)).toEqual(["some-row"]);
	});

	it("refuses a store owned by another user with a clear error", async (ctx) => {
		requires(ctx, "root (chown to another user)", notRoot());
		const { agent, store, paths } = agentWithStore();
		writeRow(paths, "some-row");
		chownSync(store, 65534, 65534);
		const foreign = await board(agent)("dispatch should not start");
		expect(foreign.code).toBe(1);
		expect(foreign.stderr).toContain(`refusing store ${store}: owned by uid 65534, not by you (uid 0)`);
		chownSync(store, 0, 0);
		expect(readdirSync(paths.rows)).toEqual(["some-row"]);
	});

	it("keeps listing with an unreadable row (EACCES)", async (ctx) => {
		const { agent, paths } = agentWithStore();
		writeRow(paths, "readable");
		writeRow(paths, "locked-row");
		chmodSync(paths.row("locked-row"), 0o000);
		// Root reads through chmod 000; drop the capabilities that let it (uid stays 0, so the store is still "ours").
		const noDac = [
			"setpriv",
			"--inh-caps=-dac_override,-dac_read_search",
			"--bounding-set=-dac_override,-dac_read_search",
		];
		const wrap = process.getuid?.() === 0 ? noDac : undefined;
		if (wrap)
			requires(
				ctx,
				"setpriv (to drop root's read-anything capabilities)",
				commandFails("setpriv", [...noDac.slice(1), "true"]),
			);
		const list = await board(agent)("list", wrap);
		const shown = await board(agent)("show locked-row", wrap);
		chmodSync(paths.row("locked-row"), 0o700);
		expect(list.code, list.stderr).toBe(0);
		expect(list.stdout).toMatch(/^readable\s+completed\s/m);
		expect(list.stdout).toMatch(/^locked-row\s+error\s+.*Error: meta\.json: cannot read /m);
		expect(shown.code, shown.stderr).toBe(0);
		expect(shown.stdout).toContain(
			`error:     meta.json: cannot read ${paths.meta("locked-row")}: EACCES (permission denied)`,
		);
	});

	it("keeps listing on a read-only store and names the path and errno of a refused change", async (ctx) => {
		// A bind mount remounted ro (root only); slots/ and sessions/ do not exist and must not be needed.
		requires(ctx, "root (mount)", notRoot());
		const { agent, store, paths } = agentWithStore();
		writeRow(paths, "readable");
		requires(ctx, "mount --bind", commandFails("mount", ["--bind", store, store]));
		mounts.push(store);
		const roError = commandFails("mount", ["-o", "remount,bind,ro", store]);
		expect(roError).toBeUndefined();
		expect(commandFails("touch", [join(store, "probe")])).toMatch(/Read-only file system/);
		const readOnly = await board(agent)("list");
		expect(readOnly.code, readOnly.stderr).toBe(0);
		expect(readOnly.stdout).toMatch(/^readable\s+completed\s/m);
		const denied = await board(agent)("archive readable");
		expect(denied.code).toBe(1);
		// The row lock is the first file a meta change writes.
		expect(denied.stderr).toContain(
			`cannot write ${join(paths.row("readable"), "lock")}: EROFS (read-only file system)`,
		);
		expect(denied.stderr).toContain(paths.row("readable"));
	});

	it("fails a dispatch on a full disk (ENOSPC) with the path and errno, leaves no half row, and still lists", async (ctx) => {
		requires(ctx, "root (mounting a small tmpfs)", notRoot());
		const { agent, store, paths } = agentWithStore();
		requires(
			ctx,
			"a tmpfs mount",
			commandFails("mount", ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", store]),
		);
		mounts.push(store);
		mkdirSync(paths.rows, { mode: 0o700 });
		writeRow(paths, "before-full");
		// Fill the disk: write until the tmpfs refuses.
		let filled = 0;
		try {
			for (;;) {
				writeFileSync(join(store, `filler-${filled}`), Buffer.alloc(4096, 1));
				filled += 1;
			}
		} catch (error) {
			expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
		}
		const dispatched = await board(agent)("dispatch this cannot fit");
		expect(dispatched.code).toBe(1);
		// e.g. "agent-board: dispatch failed, cannot write <store>/rows/<id>/runs/<run>/run.json: ENOSPC (no space left on device)"
		expect(dispatched.stderr).toMatch(
			new RegExp(`dispatch failed, cannot write ${paths.rows}/\\S+: ENOSPC \\(no space left on device\\)`),
		);
		expect(readdirSync(paths.rows)).toEqual(["before-full"]);
		const list = await board(agent)("list");
		expect(list.code, list.stderr).toBe(0);
		expect(list.stdout).toMatch(/^before-full\s+completed\s/m);
		expect(list.stdout.split("\n").filter((line) => /\serror\s/.test(line))).toEqual([]);
		expect(existsSync(join(store, "filler-0"))).toBe(true);
	});
});
