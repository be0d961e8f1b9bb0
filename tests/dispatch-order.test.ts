/**
 * What a reader can see of a dispatch, write by write: every store write is recorded in order, so
 * the test sees each version of meta.json a watcher could read. An attempt row's first meta.json
 * must already name its attempt, and it must exist before the run is queued (nothing can start a
 * run whose row is not whole).
 */
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { tempStores } from "../test-support/hardening-fixtures.ts";
import { initRepo } from "../test-support/git-repo.ts";

const writes: Array<{ path: string; value: unknown }> = [];
vi.mock("../runner/store/fs-util.mjs", async (importOriginal) => {
	const real = await importOriginal<typeof import("../runner/store/fs-util.mjs")>();
	return {
		...real,
		writeJsonAtomic(path: string, value: unknown) {
			writes.push({ path, value: JSON.parse(JSON.stringify(value)) as unknown });
			real.writeJsonAtomic(path, value);
		},
	};
});

const { createBoardService } = await import("../src/board/engine/service.ts");
const store = tempStores("pab-order-");

describe("dispatch order", () => {
	it("writes an attempt row's meta whole, attempt included, before its run is queued", async () => {
		const { root, store: dir } = store();
		const repo = initRepo(join(root, "repo"), { "README.md": "hi\n" });
		// No runner ever starts (node is /bin/false, no process is left): this test is about what is written.
		const board = createBoardService({
			storeDir: dir,
			piCommand: ["pi"],
			env: { ...process.env, AGENT_BOARD_NODE: "/bin/false" },
		});
		const rows = await board.dispatchAttempts({ prompt: "try it", cwd: repo, count: 2 });
		expect(rows.map((row) => row.attempt?.index)).toEqual([1, 2]);
		for (const row of rows) {
			const metaWrites = writes.flatMap((write, at) =>
				write.path === join(dir, "rows", row.id, "meta.json")
					? [{ at, meta: write.value as { attempt?: unknown } }]
					: [],
			);
			const queued = writes.findIndex(
				(write) =>
					write.path.startsWith(`${join(dir, "queue")}/`) && (write.value as { rowId?: string }).rowId === row.id,
			);
			expect(metaWrites.length, row.id).toBeGreaterThan(0);
			expect(metaWrites[0]?.meta.attempt, row.id).toEqual(row.attempt);
			expect(queued, row.id).toBeGreaterThan(metaWrites[0]?.at ?? Infinity);
		}
	});
});
