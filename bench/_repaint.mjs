// The one-changed-row measurement both board benchmarks take: the same loops, so their numbers compare.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * One row changes 50 times in the feed (UI only: the board places it and repaints), then 30 times on
 * disk (its status file rewritten as its runner would, then its report: a get and a repaint).
 * @param {{ render(width: number): unknown, list: { window: { formatted: number } } }} board
 * @param {{ row(id: string): object | undefined, put(row: object): void, refresh(ids: string[]): Promise<unknown> }} feed
 * @param {string} storeDir @param {string} seedId
 */
export async function repaintOneRow(board, feed, storeDir, seedId) {
	const repaint = [];
	const before = board.list.window.formatted;
	for (let i = 0; i < 50; i++) {
		const row = feed.row(seedId);
		if (!row) throw new Error("seed row missing");
		const start = performance.now();
		feed.put({ ...row, summary: `repainted ${i}`, lastActivityAt: Date.now() });
		board.render(120);
		repaint.push(performance.now() - start);
	}
	const perRepaint = (board.list.window.formatted - before) / 50;
	const changed = [];
	const runs = join(storeDir, "rows", seedId, "runs");
	const statusFile = join(runs, readdirSync(runs)[0] ?? "", "status.json");
	for (let i = 0; i < 30; i++) {
		const status = JSON.parse(readFileSync(statusFile, "utf8"));
		status.summary = `changed ${i}`;
		status.updatedAt = Date.now();
		writeFileSync(statusFile, JSON.stringify(status));
		const start = performance.now();
		await feed.refresh([seedId]);
		board.render(120);
		changed.push(performance.now() - start);
	}
	return { repaint, changed, perRepaint };
}
