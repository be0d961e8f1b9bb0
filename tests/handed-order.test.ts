/**
 * FIFO across boards and pools: the runs handed to a target's link are taken in the order they were
 * handed (the queue's claim order), not the directory's. Two boards dispatching to one pool handed two
 * runs to one member's link between its scans; it listed them newest first (tmpfs) or in hash order
 * (ext4) and started a younger run before an older one while slots were free.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { handedRuns, linkPaths } from "../runner/life/target-link-owner.mjs";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

describe("a link takes its runs in the order they were handed", () => {
	it("by the hand-over's time, whatever the names and the directory's order", () => {
		const store = mkdtempSync(join(tmpdir(), "pab-handed-"));
		dirs.push(store);
		const { runs } = linkPaths(store, "box1");
		mkdirSync(runs, { recursive: true });
		// Handed r2, then r1, then r3 (r1's dispatch began first, but r2 entered the queue first); a name
		// sort, a newest-first listing and creation order reversed all give another order.
		const handed = [
			{ runId: "r2", at: 1000 },
			{ runId: "r1", at: 1001 },
			{ runId: "r3", at: 1001 },
		];
		for (const { runId, at } of handed)
			writeFileSync(join(runs, `${runId}.json`), JSON.stringify({ rowId: `row-${runId}`, runId, slot: "s", at }));
		expect(handedRuns(store, "box1").map((run) => run.runId)).toEqual(["r2", "r1", "r3"]);
		expect(handedRuns(store, "box1")[0]).toEqual({ rowId: "row-r2", runId: "r2", slot: "s" });
	});
});
