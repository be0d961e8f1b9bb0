/**
 * Pushes the board to every open page over server-sent events: a snapshot when a page connects, then
 * each row the shared BoardFeed reports changed (re-read by the feed, not by us), its diff stats when git
 * has them, and a notice when a row needs input, fails or completes (the TUI's events: presence.ts).
 * A page that falls far behind is cut off; its EventSource reconnects and gets a fresh snapshot.
 */
import type { ServerResponse } from "node:http";
import type { BoardRow, RowState } from "../../board/engine/types.ts";
import { notificationText, transitions } from "../../board/presence/presence.ts";
import type { DiffCache } from "../../board/view-model/diff-cache.ts";
import type { BoardFeed } from "../../board/view-model/feed.ts";
import { pageRow, type PageRow } from "./row-json.ts";

/** Bytes a page may lag behind before its stream is closed (it reconnects to a snapshot). */
const MAX_BACKLOG = 8 * 1024 * 1024;
const HEARTBEAT_MS = 25_000;
/** Worktree rows whose diff stats a snapshot computes (git per row), newest first. */
const DIFF_ROWS = 100;

export interface Notice {
	id: string;
	state: RowState;
	title: string;
	text: string;
}

export class EventHub {
	private readonly clients = new Set<ServerResponse>();
	private readonly states = new Map<string, RowState>();
	private unsubscribe: (() => void) | undefined;
	private unsubscribeDiffs: (() => void) | undefined;
	private heartbeat: ReturnType<typeof setInterval> | undefined;
	/** Events sent, for the bench and tests. */
	sent = 0;

	private readonly feed: BoardFeed;
	private readonly diffs: DiffCache;

	constructor(feed: BoardFeed, diffs: DiffCache) {
		this.feed = feed;
		this.diffs = diffs;
	}

	start(): void {
		this.unsubscribe = this.feed.subscribe((ids, relisted) => this.onRows(ids, relisted));
		this.unsubscribeDiffs = this.diffs.subscribe((id) => this.onRows([id], false));
	}

	stop(): void {
		this.unsubscribe?.();
		this.unsubscribeDiffs?.();
		this.closeAll();
	}

	get size(): number {
		return this.clients.size;
	}

	/** The row as the page sees it; `diff`: with diff stats from the cache (which schedules git for a worktree row). */
	row(row: BoardRow, diff = true): PageRow {
		return pageRow(
			row,
			diff && row.worktreePath && !row.archived ? this.diffs.get(row) : (this.diffs.peek(row) ?? row.diff),
		);
	}

	/**
	 * Unarchived rows (archived ones when asked), as pages see them. Git runs for the newest worktree rows
	 * only, as the TUI asks only for the rows on its screen; the others show stats once they change or open.
	 */
	rows(archived = false): PageRow[] {
		const rows = this.feed.rows().filter((row) => row.archived === archived);
		const newest = new Set(
			rows
				.filter((row) => row.worktreePath)
				.sort((a, b) => b.lastActivityAt - a.lastActivityAt)
				.slice(0, DIFF_ROWS)
				.map((row) => row.id),
		);
		return rows.map((row) => this.row(row, newest.has(row.id)));
	}

	add(res: ServerResponse): void {
		res.writeHead(200, {
			"content-type": "text/event-stream; charset=utf-8",
			"cache-control": "no-store",
			"x-accel-buffering": "no",
		});
		this.clients.add(res);
		// A page gone mid-write: its stream is dropped, the server goes on.
		res.on("error", () => this.clients.delete(res));
		res.on("close", () => {
			this.clients.delete(res);
			if (this.clients.size === 0 && this.heartbeat) {
				clearInterval(this.heartbeat);
				this.heartbeat = undefined;
			}
		});
		// Heartbeats keep tunnels and phone networks from dropping an idle stream; none while nobody listens.
		this.heartbeat ??= setInterval(() => this.broadcast(": heartbeat\n\n"), HEARTBEAT_MS);
		this.write(res, this.event("snapshot", { rows: this.rows(), ...this.status() }));
	}

	/** Ends every stream (a token rotation: the pages find themselves logged out when they reconnect). */
	closeAll(): void {
		for (const res of this.clients) res.end();
		this.clients.clear();
		if (this.heartbeat) clearInterval(this.heartbeat);
		this.heartbeat = undefined;
	}

	private status(): {
		counts: ReturnType<BoardFeed["counts"]>;
		loading?: { done: number; total: number };
		now: number;
	} {
		return {
			counts: this.feed.counts(),
			...(this.feed.loading ? { loading: this.feed.loading } : {}),
			now: Date.now(),
		};
	}

	private onRows(ids: readonly string[], relisted: boolean): void {
		const changed: BoardRow[] = [];
		const removed: string[] = [];
		for (const id of ids) {
			const row = this.feed.row(id);
			if (row) changed.push(row);
			else removed.push(id);
		}
		// Rows first seen are not news, as in the TUI: only a change into a notify state is.
		const notices: Notice[] = transitions(this.states, changed).map((t) => ({
			id: t.row.id,
			state: t.row.state,
			...notificationText(t),
		}));
		for (const row of changed) this.states.set(row.id, row.state);
		for (const id of removed) this.states.delete(id);
		if (this.clients.size === 0) return;
		if (changed.length > 0 || removed.length > 0 || relisted)
			this.broadcast(this.event("rows", { rows: changed.map((row) => this.row(row)), removed, ...this.status() }));
		for (const notice of notices) this.broadcast(this.event("notice", notice));
	}

	private event(name: string, data: unknown): string {
		return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
	}

	private broadcast(text: string): void {
		for (const res of this.clients) this.write(res, text);
	}

	private write(res: ServerResponse, text: string): void {
		if (res.writableLength > MAX_BACKLOG) {
			res.destroy();
			return;
		}
		res.write(text);
		this.sent += 1;
	}
}
