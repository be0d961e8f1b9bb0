/** A pump with nothing queued frees slots whose run is over, and only those. */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { processStartTime } from "../runner/store/proc.mjs";
import { pumpQueue } from "../runner/life/queue.mjs";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

describe("slot sweep", () => {
	it("removes a slot whose claimer is gone and whose run has no process, keeps a live one and a young half-written one", () => {
		const store = mkdtempSync(join(tmpdir(), "pab-sweep-"));
		dirs.push(store);
		const slots = join(store, "slots");
		mkdirSync(slots, { recursive: true });
		// A claimer that has exited: its pid is gone (or reused with another start time).
		const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
			encoding: "utf8",
		});
		writeFileSync(
			join(slots, "slot-0.json"),
			JSON.stringify({ pid: Number(gone.stdout), start: "1", runId: "run-over" }),
		);
		writeFileSync(
			join(slots, "slot-1.json"),
			JSON.stringify({ pid: process.pid, start: processStartTime(process.pid), runId: "run-live" }),
		);
		writeFileSync(join(slots, "slot-2.json"), "");
		const { started, error } = pumpQueue(store, { maxConcurrent: 4, node: process.execPath, env: {} });
		expect({ started, error }).toEqual({ started: [], error: undefined });
		expect(readdirSync(slots).sort()).toEqual(["slot-1.json", "slot-2.json"]);
	});
});
