/** run.json's paths are checked against the layout it names: a store, a target's store, or a container's mounts. */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { initialStatus } from "../runner/life/state-rules.mjs";
import { runPathsOf } from "../runner/store/store-layout.mjs";

const dirs: string[] = [];
afterEach(() => {
	for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

/** Starts the runner on a run.json with these paths; returns the error its run recorded. */
function refusal(
	layout: unknown,
	paths: (store: string, runDir: string) => { runDir: string; sessionFile: string },
): string | undefined {
	const store = mkdtempSync(join(tmpdir(), "pab-layout-"));
	dirs.push(store);
	const runDir = join(store, "rows", "row1", "runs", "run1");
	mkdirSync(runDir, { recursive: true });
	writeFileSync(join(runDir, "status.json"), JSON.stringify(initialStatus("run1", "row1", Date.now())));
	const config = {
		rowId: "row1",
		runId: "run1",
		storeDir: store,
		maxConcurrent: 1,
		cwd: store,
		prompt: "p",
		piCommand: ["false"],
		env: {},
		createdAt: Date.now(),
		layout,
		...paths(store, runDir),
	};
	writeFileSync(join(runDir, "run.json"), JSON.stringify(config));
	spawnSync(process.execPath, ["runner/job-runner.mjs", join(runDir, "run.json"), join(store, "slot")], {
		encoding: "utf8",
		timeout: 30_000,
	});
	return (JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")) as { error?: string }).error;
}

describe("run.json layout", () => {
	it("derives each layout's paths from the ids alone", () => {
		expect(runPathsOf("store", "/s", "r", "u")).toEqual({
			runDir: "/s/rows/r/runs/u",
			sessionFile: "/s/sessions/r.jsonl",
		});
		expect(runPathsOf("target", "/s", "r", "u")).toEqual({
			runDir: "/s/rows/r/runs/u",
			sessionFile: "/s/sessions/r/r.jsonl",
		});
		expect(runPathsOf("container", "/anything", "r", "u")).toEqual({
			runDir: "/ab/run",
			sessionFile: "/ab/session/r.jsonl",
		});
	});

	it("refuses paths that are not the named layout's, and a layout it does not know, naming the field", () => {
		// A container's layout in a store on this machine: its run dir is not where run.json is.
		expect(refusal("container", (_store, runDir) => ({ runDir, sessionFile: "/ab/session/row1.jsonl" }))).toMatch(
			/run\.json: \/runDir is not the directory of run\.json/,
		);
		// A target's layout with the store's flat session path, and the store's layout with a target's.
		expect(
			refusal("target", (store, runDir) => ({ runDir, sessionFile: join(store, "sessions", "row1.jsonl") })),
		).toMatch(/run\.json: \/sessionFile is not the row's session file/);
		expect(
			refusal(undefined, (store, runDir) => ({
				runDir,
				sessionFile: join(store, "sessions", "row1", "row1.jsonl"),
			})),
		).toMatch(/run\.json: \/sessionFile is not the row's session file/);
		expect(refusal(undefined, (_store, runDir) => ({ runDir, sessionFile: "/etc/passwd" }))).toMatch(
			/\/sessionFile is not/,
		);
		expect(
			refusal("elsewhere", (store, runDir) => ({ runDir, sessionFile: join(store, "sessions", "row1.jsonl") })),
		).toMatch(/\/layout must be one of store, target, container/);
	});
});
