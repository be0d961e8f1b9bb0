/**
 * A pool's run that a member could not start goes back to the pool's queue in the place it had: the
 * entry its start claim kept, ahead of the runs queued after it (it went to the back: a run that waited
 * its turn lost it to every younger one, each time a member failed it). A claim that kept no entry for
 * this run in this pool sends it to the back, as a new entry.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { returnToPool } from "../runner/life/pool-return.mjs";
import { entryName } from "../runner/life/queue-entries.mjs";
import { queueDir } from "../runner/life/queue-lock.mjs";
import { processStartTime } from "../runner/store/proc.mjs";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A store with run-1 claimed (its entry at place 1000 kept in its claim) and run-2 waiting behind it at 2000. */
function store(queued: object | undefined) {
	const root = mkdtempSync(join(tmpdir(), "pab-pool-return-"));
	dirs.push(root);
	for (const runId of ["run-1", "run-2"]) {
		const runDir = join(root, "rows", `row-${runId}`, "runs", runId);
		mkdirSync(runDir, { recursive: true });
		writeFileSync(join(runDir, "run.json"), "{}");
	}
	const runDir = join(root, "rows", "row-run-1", "runs", "run-1");
	const me = { by: process.pid, start: processStartTime(process.pid) };
	writeFileSync(join(runDir, "claim.json"), JSON.stringify({ ...me, purpose: "start", at: 1500, ...queued }));
	mkdirSync(queueDir(root), { recursive: true });
	const younger = { rowId: "row-run-2", runId: "run-2", at: 2000, target: "build" };
	writeFileSync(join(queueDir(root), entryName(younger)), JSON.stringify(younger));
	const back = returnToPool({
		storeDir: root,
		runDir,
		rowId: "row-run-1",
		runId: "run-1",
		createdAt: 900,
		pool: "build",
		member: "a",
		members: ["a", "b"],
		reason: "unreachable",
	});
	expect(back).toEqual({ requeued: true });
	return readdirSync(queueDir(root)).filter((name) => name.endsWith(".json") && !name.startsWith("."));
}

describe("a pool's run handed back by a member", () => {
	it("goes back to its place in the pool's queue, ahead of the runs queued after it", () => {
		const kept = { rowId: "row-run-1", runId: "run-1", at: 1000, target: "build" };
		expect(store({ queued: kept }).sort()).toEqual([entryName(kept), entryName({ at: 2000, runId: "run-2" })]);
	});

	it("goes to the back when its claim kept no entry of its own in this pool", () => {
		for (const queued of [
			undefined,
			{ queued: { rowId: "row-run-2", runId: "run-2", at: 1000, target: "build" } },
			{ queued: { rowId: "row-run-1", runId: "run-1", at: 1000, target: "other" } },
		]) {
			const names = store(queued).sort();
			expect(names[0]).toBe(entryName({ at: 2000, runId: "run-2" }));
			expect(names[1]).toMatch(/^\d{15}-run-1\.json$/);
		}
	});
});
