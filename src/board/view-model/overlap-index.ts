/**
 * Overlaps as rows change, not only as of the last full list: the files each unmerged worktree row
 * touched come from the diff cache (async git, refreshed when its worktree changes), and the engine's
 * pure computeOverlaps pairs them per repository. Until every rival row of a repository has reported
 * its files, a row keeps the overlaps of the last full list.
 */
import type { BoardRow, FileOverlap } from "../engine/types.ts";
import { computeOverlaps, overlapCandidates, type TouchedRow } from "../engine/git/overlap.ts";
import type { DiffCache } from "./diff-cache.ts";
import type { BoardFeed } from "./feed.ts";

export class OverlapIndex {
	private readonly candidates = new Map<string, BoardRow>();
	private overlaps = new Map<string, FileOverlap[]>();
	/** Repositories whose every candidate row has files: their overlaps are known. */
	private known = new Set<string>();
	private readonly listeners = new Set<() => void>();
	private readonly feed: BoardFeed;
	private readonly cache: DiffCache;
	private stopFeed: (() => void) | undefined;
	private stopCache: (() => void) | undefined;

	constructor(feed: BoardFeed, cache: DiffCache) {
		this.feed = feed;
		this.cache = cache;
	}

	/** Follows the feed and the cache (idempotent); worktree rows are found by one pass over the rows. */
	start(): void {
		if (this.stopFeed) return;
		this.stopFeed = this.feed.subscribe((ids, relisted) => {
			if (relisted) this.candidates.clear();
			for (const id of relisted ? this.feed.rows().map((row) => row.id) : ids) this.track(id);
			this.recompute();
		});
		this.stopCache = this.cache.subscribe(() => this.recompute());
		for (const row of this.feed.rows()) this.track(row.id);
		this.recompute();
	}

	stop(): void {
		this.stopFeed?.();
		this.stopCache?.();
		this.stopFeed = undefined;
		this.stopCache = undefined;
	}

	subscribe(listener: () => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	private track(id: string): void {
		const row = this.feed.row(id);
		this.candidates.delete(id);
		if (!row || overlapCandidates([row]).length === 0) return;
		this.candidates.set(id, row);
		// Asks the cache for the row's files (a git pass when its worktree changed, at most every few seconds).
		this.cache.get(row);
	}

	/** The row's overlaps when they are known from fresh files; undefined when the last full list's must do. */
	of(row: BoardRow): readonly FileOverlap[] | undefined {
		if (!row.repo || !this.known.has(row.repo) || !this.candidates.has(row.id)) return undefined;
		return this.overlaps.get(row.id) ?? [];
	}

	private recompute(): void {
		const byRepo = new Map<string, BoardRow[]>();
		for (const row of this.candidates.values()) {
			const list = byRepo.get(row.repo ?? "") ?? [];
			list.push(row);
			byRepo.set(row.repo ?? "", list);
		}
		const known = new Set<string>();
		const touched: TouchedRow[] = [];
		for (const [repo, rows] of byRepo) {
			const files = rows.map((row) => this.cache.files(row));
			if (files.some((list) => list === undefined)) continue;
			known.add(repo);
			rows.forEach((row, i) => {
				touched.push({ id: row.id, repo, files: files[i] ?? [], set: row.attempt?.setId });
			});
		}
		const next = computeOverlaps(touched);
		const changed =
			JSON.stringify([...next]) !== JSON.stringify([...this.overlaps]) ||
			[...known].join("\n") !== [...this.known].join("\n");
		this.overlaps = next;
		this.known = known;
		if (changed) for (const listener of this.listeners) listener();
	}
}
