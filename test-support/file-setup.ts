/**
 * Runs before every test file (vitest setupFiles). Everything the file starts inherits a mark in its
 * environment, PAB_TEST_FILE=<id>: a detached runner, worker or store keeper the file's own cleanup
 * missed is ended when the file is done, so it can neither write into the next file's scratch dirs
 * nor take the CPU from the files that run after it. What was left is named on stderr: a leak to fix.
 *
 * Unit files (`unit: true`) spawn nothing: a board service they make starts no store keeper.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { procsWithEnv } from "./proc-scan.ts";

const MARK = "PAB_TEST_FILE";

/** A container engine's own processes inherit the mark too: they are the engine's to end, not ours. */
const ENGINE_PROCESSES = new Set(["podman", "conmon", "catatonit", "runc", "slirp4netns", "pasta"]);

function comm(pid: number): string {
	try {
		return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
	} catch {
		return "";
	}
}

function argv(pid: number): string {
	try {
		return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
	} catch {
		return "";
	}
}

function leftovers(entry: string): number[] {
	return procsWithEnv([entry]).filter((pid) => !ENGINE_PROCESSES.has(comm(pid)));
}

export function setUpTestFile(options: { unit: boolean }): void {
	const id = `${process.pid}-${Math.random().toString(16).slice(2, 10)}`;
	process.env[MARK] = id;
	if (options.unit) process.env.AGENT_BOARD_KEEPER = "off";
	// One V8 code cache for every node the suite starts (pi, runners, keepers): pi would keep one per
	// TMPDIR, and a local worker's TMPDIR is its store's, new in nearly every test.
	process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), `pab-node-compile-cache-${userInfo().uid}`);
	// PAB_TEST_MARKS=<file>: which mark is which test file, for a profiler that reads the marks in /proc.
	const marks = process.env.PAB_TEST_MARKS;
	if (marks) beforeAll(() => appendFileSync(marks, `${id} ${expect.getState().testPath ?? "?"}\n`));
	afterAll(() => {
		const entry = `${MARK}=${id}`;
		const left = leftovers(entry);
		if (left.length === 0) return;
		const named = left.map((pid) => `${pid} ${argv(pid).slice(0, 160)}`);
		process.stderr.write(`test file left ${left.length} process(es), ended now:\n  ${named.join("\n  ")}\n`);
		const pause = new Int32Array(new SharedArrayBuffer(4));
		for (let round = 0; round < 50; round += 1) {
			const pids = leftovers(entry);
			if (pids.length === 0) return;
			for (const pid of pids) {
				try {
					process.kill(pid, "SIGKILL");
				} catch {
					// Already gone.
				}
			}
			Atomics.wait(pause, 0, 0, 50);
		}
	});
}
