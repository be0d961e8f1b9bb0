/**
 * The one shared view of the board inside pi: the dashboard, the footer status and the below-editor
 * strip all read rows from here, so they never disagree. It starts on the live rows only (the
 * engine's live summary: what the footer and strip count), then follows `service.watch()` and
 * re-reads only the rows reported (`service.get`). The dashboard asks for every row (`fill`): the
 * newest first, before its first paint, the rest in idle slices while it says it is loading. Idle, it
 * does no work at all.
 */
import { setImmediate } from "node:timers";
import type { BoardRow, BoardService } from "../engine/types.ts";
import { addCount, type RowCounts } from "./row-text.ts";
import { keptWhole, slimRow } from "./row-slim.ts";
import { notOver } from "../../../runner/life/phase.mjs";

/** `relisted`: the whole store was read again (its ids are every row, gone ones included). */
export type FeedListener = (changedIds: readonly string[], relisted: boolean) => void;

export interface FeedOptions {
	/** A report naming more rows than this re-lists instead of reading them one by one. */
	relistAbove?: number;
	/** fill(): rows read before the first paint, then per idle slice. */
	firstRows?: number;
	sliceRows?: number;
}

/** fill()'s progress: rows known of the store's `total`. */
export interface FillProgress {
	done: number;
	total: number;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

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
	/** Rows views show in full (hold()), with how many views do. */
	private readonly held = new Map<string, number>();
	private readonly slimmed = new Set<string>();
	/** Rows that run on a target: while there are none, nothing shows a target (a local-only board looks as it did). */
	private readonly remote = new Set<string>();
	/** Bumped on every applied change; consumers compare it to skip work. */
	revision = 0;
	lastError = "";

	/** Every row of the store has been read (a full list, or fill() to its end). */
	private complete = false;
	private filling: { first: Promise<void>; done: Promise<void> } | undefined;
	/** While fill() reads the store in slices: how far it is. */
	loading: FillProgress | undefined;

	private readonly getService: () => BoardService;
	private readonly relistAbove: number;
	private readonly firstRows: number;
	private readonly sliceRows: number;

	constructor(getService: () => BoardService, options: FeedOptions = {}) {
		this.getService = getService;
		this.relistAbove = options.relistAbove ?? 32;
		this.firstRows = options.firstRows ?? 200;
		this.sliceRows = options.sliceRows ?? 250;
	}

	/** Starts watching (idempotent); resolves once the live rows (or, without a live summary, all rows) are in. */
	start(): Promise<void> {
		if (this.ready) return this.ready;
		const service = this.getService();
		this.unwatch = service.watch((ids, words) => {
			if (ids.length > 0) void this.refresh(ids);
			if (words?.length) this.grew(words);
		});
		if (service.liveRows) this.ready = this.seedLive(service.liveRows.bind(service));
		else {
			this.relistPending = true;
			this.ready = this.drain();
		}
		return this.ready;
	}

	private async seedLive(read: () => Promise<BoardRow[]>): Promise<void> {
		try {
			const rows = await read();
			// A row a watch report read meanwhile is newer than the summary's read.
			const fresh = rows.filter((row) => !this.rowMap.has(row.id));
			for (const row of fresh) this.set(row.id, row);
			this.lastError = "";
			this.applied(fresh.map((row) => row.id));
		} catch (error) {
			this.lastError = error instanceof Error ? error.message : String(error);
			this.applied([]);
		}
	}

	/**
	 * Every row, for the dashboard (idempotent). `first` resolves once the live rows and the newest
	 * `firstRows` are in (what a first screen shows); `done` once the whole store is, read in idle slices
	 * meanwhile (newest first) and reported as ordinary changes, with `loading` saying how far it is.
	 */
	fill(): { first: Promise<void>; done: Promise<void> } {
		if (this.filling) return this.filling;
		const service = this.getService();
		if (this.complete || !service.rowIds) {
			const all = this.start().then(() => (this.complete ? undefined : this.refresh("all")));
			this.filling = { first: all, done: all };
			return this.filling;
		}
		const listIds = service.rowIds.bind(service);
		let firstDone: () => void = () => undefined;
		const first = new Promise<void>((resolve) => (firstDone = resolve));
		const filling = { first, done: Promise.resolve() };
		const done = (async () => {
			try {
				await this.start();
				// Row ids are time-sortable: the newest rows are the last ids.
				const todo = (await listIds()).reverse();
				const total = todo.length;
				this.loading = { done: 0, total };
				let at = 0;
				while (at < todo.length) {
					// stop() ends a fill: its rows would land in a feed nobody follows.
					if (this.filling !== filling) return;
					const slice = todo
						.slice(at, at + (at === 0 ? this.firstRows : this.sliceRows))
						.filter((id) => !this.rowMap.has(id));
					at += at === 0 ? this.firstRows : this.sliceRows;
					const rows = await Promise.all(
						slice.map((id) => service.get(id, { slim: true }).catch(() => undefined)),
					);
					const applied: string[] = [];
					slice.forEach((id, i) => {
						// A watch report may have read it meanwhile, fresher.
						if (this.rowMap.has(id)) return;
						this.set(id, rows[i]);
						applied.push(id);
					});
					this.loading = at < total ? { done: Math.min(at, total), total } : undefined;
					this.applied(applied);
					firstDone();
					if (at < total) await nextTurn();
				}
				this.loading = undefined;
				this.complete = true;
				this.applied([]);
			} catch (error) {
				if (this.filling !== filling) return;
				this.loading = undefined;
				this.lastError = error instanceof Error ? error.message : String(error);
				this.filling = undefined;
				this.applied([]);
			} finally {
				firstDone();
			}
		})();
		filling.done = done;
		this.filling = filling;
		return filling;
	}

	stop(): void {
		this.unwatch?.();
		this.unwatch = undefined;
		this.ready = undefined;
		this.filling = undefined;
		this.loading = undefined;
		this.complete = false;
		this.rowMap.clear();
		this.live.clear();
		this.slimmed.clear();
		for (const key of Object.keys(this.tally) as (keyof RowCounts)[]) this.tally[key] = 0;
		this.snapshot = undefined;
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

	/**
	 * A view shows this row in full (peek, reply, console): it is kept whole, and re-read now if it was
	 * slimmed. Returns the release; the row is slimmed again at its next change.
	 */
	hold(id: string): () => void {
		const count = this.held.get(id) ?? 0;
		this.held.set(id, count + 1);
		if (count === 0 && this.rowMap.get(id) && this.slimmed.has(id)) void this.refresh([id]);
		let released = false;
		return () => {
			if (released) return;
			released = true;
			const left = (this.held.get(id) ?? 1) - 1;
			if (left > 0) this.held.set(id, left);
			else this.held.delete(id);
		};
	}

	private set(id: string, full: BoardRow | undefined): void {
		// Rows nobody shows in full keep only what a line shows (row-slim.ts).
		const row = full && !this.held.has(id) && !keptWhole(full) ? slimRow(full) : full;
		if (row && row !== full) this.slimmed.add(id);
		else this.slimmed.delete(id);
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
		if (!row.archived && (notOver(row) || row.state === "needs_input")) this.live.add(id);
	}

	/** Re-read these rows (after a local action, or as the watcher reported); resolves when applied. */
	refresh(ids: readonly string[] | "all"): Promise<void> {
		if (ids === "all" || ids.length > this.relistAbove) this.relistPending = true;
		else for (const id of ids) this.pending.add(id);
		return this.drain();
	}

	/**
	 * Rows whose streamed words grew: each live row shown takes its newest words (service.words, one small
	 * read), without a read of the row. A row waiting for its read gets them there.
	 */
	private grew(ids: readonly string[]): void {
		const service = this.getService();
		if (!service.words) return void this.refresh(ids);
		const changed: string[] = [];
		for (const id of ids) {
			const row = this.rowMap.get(id);
			if (!row || this.pending.has(id)) continue;
			const fresh = service.words(row);
			if (fresh === row) continue;
			this.rowMap.set(id, fresh);
			changed.push(id);
		}
		if (changed.length > 0) this.applied(changed);
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
					const rows = await service.list({ includeArchived: true, slim: true });
					const gone = new Set(this.rowMap.keys());
					for (const id of gone) this.set(id, undefined);
					for (const row of rows) {
						this.set(row.id, row);
						gone.delete(row.id);
					}
					this.lastError = "";
					this.complete = true;
					// Rows a relist no longer finds are reported too, so every listener drops them.
					this.applied([...rows.map((row) => row.id), ...gone], true);
					continue;
				}
				const ids = [...this.pending];
				this.pending.clear();
				const fresh = await Promise.all(
					ids.map((id) => service.get(id, { slim: !this.held.has(id) }).catch(() => undefined)),
				);
				ids.forEach((id, i) => {
					const row = fresh[i];
					// `get` runs no git, so it has no overlaps: keep the last full list's until the next one.
					const previous = this.rowMap.get(id);
					this.set(
						id,
						row && !row.overlaps && previous?.overlaps && !row.merged
							? { ...row, overlaps: previous.overlaps }
							: row,
					);
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
