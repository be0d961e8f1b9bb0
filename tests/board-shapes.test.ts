/**
 * Store files whose readers trust them beside meta.json and status.json: a runner's run.json and a
 * run's events.jsonl. A wrong shape is an error naming the path and the field; nothing is rewritten.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUNNER_PATH } from "../runner/life/spawn-runner.mjs";
import { runConfigError } from "../runner/life/run-config.mjs";
import { createBoardService } from "../src/board/engine/service.ts";
import { tempStores, writeRow } from "../test-support/hardening-fixtures.ts";

const store = tempStores("pab-shapes-");

describe("run.json and events.jsonl are checked by their readers", () => {
	it("names the first wrong field of a run config", () => {
		const good = {
			rowId: "r",
			runId: "run-r",
			runDir: "/s/r",
			storeDir: "/s",
			maxConcurrent: 4,
			sessionFile: "/s/r.jsonl",
			cwd: "/",
			prompt: "hi",
			piCommand: ["pi"],
			env: {},
			createdAt: 1,
		};
		expect(runConfigError(good)).toBeUndefined();
		expect(runConfigError({ ...good, model: "faux/faux-1", stopGraceMs: 10 })).toBeUndefined();
		expect(runConfigError([])).toBe("/ must be object");
		expect(runConfigError({ ...good, prompt: 42 })).toBe("/prompt must be string");
		expect(runConfigError({ ...good, piCommand: [] })).toBe("/piCommand must be a non-empty array of strings");
		expect(runConfigError({ ...good, env: { A: 1 } })).toBe("/env must be an object of strings");
		expect(runConfigError({ ...good, stopGraceMs: "soon" })).toBe("/stopGraceMs must be number");
		const { createdAt: _dropped, ...missing } = good;
		expect(runConfigError(missing)).toBe("/createdAt is required");
	});

	it("a runner given a wrong-typed run.json records the run failed with the path and field, and leaves run.json as it was", () => {
		const { store: dir, paths } = store();
		const row = writeRow(paths, "bad-config", { state: "queued" });
		const config = join(row.runDir, "run.json");
		const text = JSON.stringify({
			rowId: row.id,
			runId: row.runId,
			runDir: row.runDir,
			storeDir: dir,
			maxConcurrent: 1,
			sessionFile: paths.session(row.id),
			cwd: "/",
			prompt: 42,
			piCommand: ["pi"],
			env: {},
			createdAt: 1,
		});
		writeFileSync(config, text, { mode: 0o600 });
		const result = spawnSync(process.execPath, [RUNNER_PATH, config, join(dir, "slots", "slot-0.json")], {
			encoding: "utf8",
			timeout: 30_000,
		});
		expect(result.status, result.stderr).toBe(1);
		expect(result.stderr).toContain(`${config}: /prompt must be string`);
		expect(JSON.parse(readFileSync(join(row.runDir, "status.json"), "utf8"))).toMatchObject({
			state: "failed",
			error: `${config}: /prompt must be string`,
		});
		expect(readFileSync(config, "utf8")).toBe(text);
	});

	it("checks every line of events.jsonl: a wrong line names the file and line; a torn last line is not an event yet", async () => {
		const { store: dir, paths } = store();
		const row = writeRow(paths, "events");
		const file = join(row.runDir, "events.jsonl");
		writeFileSync(file, '{"seq":1,"at":1,"type":"agent_start"}\n{"seq":2,"at":2,"type":"turn_start"}\n{"seq":3,"at"');
		const board = createBoardService({ storeDir: dir, piCommand: ["pi"] });
		expect((await board.events(row.id)).map((event) => event.type)).toEqual(["agent_start", "turn_start"]);
		const wrong = '{"seq":1,"at":1,"type":"agent_start"}\n{"seq":2,"at":"later","type":"turn_start"}\n';
		writeFileSync(file, wrong);
		await expect(board.events(row.id)).rejects.toThrow(`${file}: line 2: /at must be number`);
		writeFileSync(file, "not json\n");
		await expect(board.events(row.id)).rejects.toThrow(`${file}: line 1: invalid JSON`);
		writeFileSync(file, wrong);
		await board.events(row.id).catch(() => undefined);
		expect(readFileSync(file, "utf8")).toBe(wrong);
	});
});
