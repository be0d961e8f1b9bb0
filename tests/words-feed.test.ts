/**
 * Grown words reach a watcher on their own (docs/engine.md, "Live view"): the store watch names a row whose
 * words/ poke changed apart from the rows whose notify/ did, and the shared feed then reads only that row's
 * words (service.words), never the row.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { WORDS_DIR } from "../runner/live-words.mjs";
import { StoreWatch } from "../src/board/engine/store-watch.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { BoardFeed } from "../src/board/view-model/feed.ts";
import { createFakeBoard, makeRow } from "../test-support/fake-board-service.ts";
import { waitFor } from "../test-support/wait.ts";

const dirs: string[] = [];
afterAll(() => {
	for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("the store watch", () => {
	it("names rows whose words grew apart from rows that changed, and a row in both as changed", async () => {
		const storeRoot = mkdtempSync(join(tmpdir(), "pab-words-watch-"));
		dirs.push(storeRoot);
		const watch = new StoreWatch({ storeRoot, safetyCheck: async () => [], safetyPollMs: 60_000 });
		const batches: { ids: string[]; words: string[] }[] = [];
		const stop = watch.subscribe((ids, words) => batches.push({ ids: [...ids], words: [...words] }));
		try {
			writeFileSync(join(storeRoot, WORDS_DIR, "row-a"), "1");
			await waitFor(() => batches.find((b) => b.words.includes("row-a")), "row-a's words reported");
			expect(batches.flatMap((b) => b.ids)).toEqual([]);

			batches.length = 0;
			writeFileSync(join(storeRoot, WORDS_DIR, "row-b"), "1");
			writeFileSync(join(storeRoot, "notify", "row-b"), "1");
			await waitFor(() => batches.find((b) => b.ids.includes("row-b")), "row-b reported changed");
			// A row read whole takes its words with it: it is not also reported for its words alone, in the same batch.
			for (const batch of batches) expect(batch.ids.includes("row-b") && batch.words.includes("row-b")).toBe(false);
		} finally {
			stop();
		}
	});
});

describe("the shared feed", () => {
	it("takes a working row's grown words with service.words, without reading the row", async () => {
		const row = makeRow({ state: "working", alive: true, live: { text: "old words" } });
		const fake = createFakeBoard([row]);
		let report: ((ids: readonly string[], words?: readonly string[]) => void) | undefined;
		fake.watch = (onChange) => {
			report = onChange;
			return () => undefined;
		};
		const asked: string[] = [];
		fake.words = (given: BoardRow) => {
			asked.push(given.id);
			return { ...given, live: { text: "old words and new ones" } };
		};
		const feed = new BoardFeed(() => fake);
		await feed.fill().done;
		const changes: string[][] = [];
		feed.subscribe((ids) => changes.push([...ids]));
		const reads = fake.getCount;

		report?.([], [row.id]);
		expect(feed.row(row.id)?.live?.text).toBe("old words and new ones");
		expect(asked).toEqual([row.id]);
		expect(changes).toEqual([[row.id]]);
		expect(fake.getCount).toBe(reads);

		// Words of a row the feed does not hold wait for its read.
		report?.([], ["not-held"]);
		expect(asked).toEqual([row.id]);
		feed.stop();
	});
});
