/**
 * runFilesProblem (engine/run-files-check.ts): a run's file that is a symbolic link, a socket, or a
 * directory where a file belongs is named with why; a plain run is fine; a change is seen at once.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runFilesProblem } from "../src/board/engine/run-files-check.ts";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

describe("a run's files are what they should be", () => {
	it("names a symlink, a directory in a file's place, a planted receipt link; a plain run has none", () => {
		const runDir = mkdtempSync(join(tmpdir(), "pab-run-files-"));
		dirs.push(runDir);
		for (const name of ["run.json", "status.json", "events.jsonl", "runner.json"])
			writeFileSync(join(runDir, name), "{}");
		for (const sub of ["inbox", "claimed", "receipts"]) mkdirSync(join(runDir, sub));
		writeFileSync(join(runDir, "receipts", "m1.json"), "{}");
		expect(runFilesProblem(runDir)).toBeUndefined();

		unlinkSync(join(runDir, "events.jsonl"));
		symlinkSync("/etc/passwd", join(runDir, "events.jsonl"));
		expect(runFilesProblem(runDir)).toBe("events.jsonl: is a symbolic link (not followed)");
		unlinkSync(join(runDir, "events.jsonl"));
		expect(runFilesProblem(runDir)).toBeUndefined();

		mkdirSync(join(runDir, "worker.json"));
		expect(runFilesProblem(runDir)).toBe("worker.json: a directory, not a file");
		rmSync(join(runDir, "worker.json"), { recursive: true });

		symlinkSync("/etc/passwd", join(runDir, "receipts", "m2.json"));
		expect(runFilesProblem(runDir)).toBe("receipts/m2.json: is a symbolic link (not followed)");
		unlinkSync(join(runDir, "receipts", "m2.json"));
		expect(runFilesProblem(runDir)).toBeUndefined();
	});

	it("names a socket in a file's place", async () => {
		const runDir = mkdtempSync(join(tmpdir(), "pab-run-files-"));
		dirs.push(runDir);
		writeFileSync(join(runDir, "status.json"), "{}");
		const server = createServer();
		await new Promise<void>((resolve) => server.listen(join(runDir, "stderr.log"), resolve));
		try {
			expect(runFilesProblem(runDir)).toBe("stderr.log: not a regular file");
		} finally {
			server.close();
		}
	});
});
