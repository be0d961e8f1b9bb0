/**
 * The one shared view of the board inside pi: the dashboard, the footer status and the below-editor
 * strip all read rows from here, so they never disagree. It lists once, then follows
 * `service.watch()` and re-reads only the rows reported (`service.get`); only a report naming many
 * rows (the engine's safety poll) costs a full list. Idle, it does no work at all.
 */
import type { BoardRow, BoardService } from "../types.ts";
import { addCount, type RowCounts } from "./row-text.ts";

/** `relisted`: the whole store was read again (its ids are every row, gone ones included). */
export type FeedListener = (changedIds: readonly string[], relisted: boolean) => void;

export interface FeedOptions {
	/** A report naming more rows than this re-lists instead of reading them one by one. */
	relistAbove?: number;
}

export class BoardFeed {
	private readonly rowMap = new Map<string, BoardRow>();
	private readonly listeners = new Set<FeedListener>();
	private readonly pending = new Set<string>();
	private relistPending = false;
	private draining: Promise<void> | undefined;
	private unwatch: (() => void) | undefined;
	private ready: Promise<void> | undefined;
	private snapshot: BoardRow[] | undefined;
	/** Kept up to date row by row, so the header, footer and strip never count the whole store. */
	private readonly tally: RowCounts = { rows: 0, archived: 0, waiting: 0, running: 0 };
	private readonly live = new Set<string>();
	/** Rows that run on a target: while there are none, nothing shows a target (a local-only board looks as it did). */
	private readonly remote = new Set<string>();
	/** Bumped on every applied change; consumers compare it to skip work. */
	revision = 0;
	lastError = "";

	private readonly getService: () => BoardService;
	private readonly relistAbove: number;

	constructor(getService: () => BoardService, options: FeedOptions = {}) {
		this.getService = getService;
		this.relistAbove = options.relistAbove ?? 32;
	}

	/** Starts watching (idempotent); resolves after the first full list. */
	start(): Promise<void> {
		if (this.ready) return this.ready;
		this.relistPending = true;
		this.ready = this.drain();
		this.unwatch = this.getService().watch((ids) => this.refresh(ids));
		return this.ready;
	}

	stop(): void {
		this.unwatch?.();
		this.unwatch = undefined;
		this.ready = undefined;
	}

	get started(): boolean {
		return this.ready !== undefined;
	}

	subscribe(listener: FeedListener): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/** All rows (archived included), in store order; the same array until the next change. */
	rows(): readonly BoardRow[] {
		this.snapshot ??= [...this.rowMap.values()];
		return this.snapshot;
	}

	row(id: string): BoardRow | undefined {
		return this.rowMap.get(id);
	}

	counts(): RowCounts {
		return { ...this.tally };
	}

	/** Whether any row runs on a target (not this machine). */
	anyRemote(): boolean {
		return this.remote.size > 0;
	}

	/** Ids of unarchived rows that need input, work or wait in the queue (the strip's rows). */
	liveIds(): ReadonlySet<string> {
		return this.live;
	}

	private set(id: string, row: BoardRow | undefined): void {
		const old = this.rowMap.get(id);
		if (old) addCount(this.tally, old, -1);
		this.live.delete(id);
		this.remote.delete(id);
		if (!row) {
			this.rowMap.delete(id);
			return;
		}
		this.rowMap.set(id, row);
		addCount(this.tally, row, 1);
		if (row.target) this.remote.add(id);
		if (!row.archived && (row.alive || row.state === "needs_input" || row.state === "working" || row.state === "queued")) this.live.add(id);
	}

	/** Re-read these rows (after a local action, or as the watcher reported); resolves when applied. */
	refresh(ids: readonly string[] | "all"): Promise<void> {
		if (ids === "all" || ids.length > this.relistAbove) this.relistPending = true;
		else for (const id of ids) this.pending.add(id);
		return this.drain();
	}

	/** Puts a row the caller already holds (a dispatch or reply result) without another read. */
	put(row: BoardRow): void {
		this.set(row.id, row);
		this.applied([row.id]);
	}

	private drain(): Promise<void> {
		// One drain at a time; reports arriving meanwhile are picked up by its next loop.
		this.draining ??= this.loop().finally(() => {
			this.draining = undefined;
		});
		return this.draining;
	}

	private async loop(): Promise<void> {
		const service = this.getService();
		while (this.relistPending || this.pending.size > 0) {
			try {
				if (this.relistPending) {
					this.relistPending = false;
					this.pending.clear();
					const rows = await service.list({ includeArchived: true });
					const gone = new Set(this.rowMap.keys());
					for (const id of gone) this.set(id, undefined);
					for (const row of rows) {
						this.set(row.id, row);
						gone.delete(row.id);
					}
					this.lastError = "";
					// Rows a relist no longer finds are reported too, so every listener drops them.
					this.applied([...rows.map((row) => row.id), ...gone], true);
					continue;
				}
				const ids = [...this.pending];
				this.pending.clear();
				const fresh = await Promise.all(ids.map((id) => service.get(id).catch(() => undefined)));
				ids.forEach((id, i) => {
					const row = fresh[i];
					// `get` runs no git, so it has no overlaps: keep the last full list's until the next one.
					const previous = this.rowMap.get(id);
					this.set(id, row && !row.overlaps && previous?.overlaps && !row.merged ? { ...row, overlaps: previous.overlaps } : row);
				});
				this.lastError = "";
				this.applied(ids);
			} catch (error) {
				// A store being written mid-read is retried by the next report; the last rows stay shown.
				this.lastError = error instanceof Error ? error.message : String(error);
				this.applied([]);
				return;
			}
		}
	}

	private applied(ids: readonly string[], relisted = false): void {
		this.snapshot = undefined;
		this.revision += 1;
		for (const listener of this.listeners) listener(ids, relisted);
	}
}
