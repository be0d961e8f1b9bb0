/**
 * In-memory BoardService for dashboard component tests and benches: same contract as the engine,
 * no processes. Records every call so tests can assert what the UI asked for.
 */
import type { BoardRow, BoardService, DispatchOptions, RowState } from "../src/board/engine/types.ts";

export interface FakeBoard extends BoardService {
	rows: BoardRow[];
	calls: { method: string; args: unknown[] }[];
	listCount: number;
	getCount: number;
	/** The next reply throws this (then it is cleared), as a reply to an ended run would. */
	replyError: Error | undefined;
	/** Reports every row to watchers (like the engine's safety poll). */
	bump(): void;
	/** Reports only these rows to watchers. */
	touch(...ids: string[]): void;
	setState(id: string, state: RowState, patch?: Partial<BoardRow>): void;
}

let seq = 0;
/** Rows made without a time share one: their order (newest first, then id) never depends on a clock tick between two calls. */
const MADE_AT = Date.now();

export function makeRow(patch: Partial<BoardRow> = {}): BoardRow {
	seq += 1;
	const now = Date.now();
	return {
		id: `r${String(seq).padStart(4, "0")}`,
		name: `row ${seq}`,
		cwd: "/tmp/work",
		sessionFile: `/tmp/sessions/${seq}.jsonl`,
		createdAt: now - 60_000,
		updatedAt: now,
		pinned: false,
		archived: false,
		worktreeMode: "none",
		state: "completed",
		alive: false,
		summary: "did the thing",
		lastActivityAt: MADE_AT - 30_000,
		recentEvents: [],
		...patch,
	};
}

export function createFakeBoard(initial: BoardRow[] = [], storeDir = "/tmp/fake-board"): FakeBoard {
	let version = 0;
	let all = false;
	const dirty = new Set<string>();
	const watchers = new Set<(ids: readonly string[]) => void>();
	// Reports go out on a microtask-free timer, like fs.watch events, and name only what changed.
	let _flush: ReturnType<typeof setTimeout> | undefined;
	const schedule = () => {
		_flush ??= setTimeout(() => {
			_flush = undefined;
			const ids = all ? board.rows.map((row) => row.id) : [...dirty];
			all = false;
			dirty.clear();
			if (ids.length > 0) for (const watcher of watchers) watcher(ids);
		}, 5);
	};
	const changed = (id?: string) => {
		version += 1;
		if (id) dirty.add(id);
		else all = true;
		schedule();
	};
	const board: FakeBoard = {
		storeDir,
		rows: initial,
		calls: [],
		listCount: 0,
		getCount: 0,
		replyError: undefined,
		bump() {
			changed();
		},
		touch(...ids) {
			for (const id of ids) changed(id);
		},
		setState(id, state, patch = {}) {
			const row = board.rows.find((r) => r.id === id);
			if (!row) throw new Error(`no row ${id}`);
			Object.assign(row, { state, lastActivityAt: Date.now(), ...patch });
			changed(id);
		},
		async dispatch(options: DispatchOptions) {
			board.calls.push({ method: "dispatch", args: [options] });
			const row = makeRow({
				name: options.name ?? options.prompt.slice(0, 30),
				cwd: options.cwd,
				model: options.model,
				state: "working",
				alive: true,
				summary: options.prompt,
			});
			board.rows.push(row);
			changed(row.id);
			return { ...row };
		},
		async list(options) {
			board.listCount += 1;
			return board.rows.filter((row) => options?.includeArchived || !row.archived).map((row) => ({ ...row }));
		},
		async get(id) {
			board.getCount += 1;
			const row = board.rows.find((r) => r.id === id);
			return row ? { ...row } : undefined;
		},
		async reply(id, prompt, options) {
			board.calls.push({ method: "reply", args: options ? [id, prompt, options] : [id, prompt] });
			const error = board.replyError;
			board.replyError = undefined;
			if (error) throw error;
			if (must(board, id).archived) throw new Error(`row ${id} is archived; unarchive it before replying`);
			const wasAlive = must(board, id).alive;
			board.setState(id, "working", { alive: true, question: undefined });
			return {
				row: { ...must(board, id) },
				delivery: wasAlive ? (options?.followUp ? "followUp" : "steer") : "new-run",
			};
		},
		async stop(id) {
			board.calls.push({ method: "stop", args: [id] });
			board.setState(id, "stopped", { alive: false });
			return { ...must(board, id) };
		},
		async stopOutcome(id) {
			const ended = !must(board, id).alive;
			const row = await this.stop(id);
			return { row, outcome: ended ? "ended" : "stopped" };
		},
		async archive(id) {
			board.calls.push({ method: "archive", args: [id] });
			must(board, id).archived = true;
			changed(id);
		},
		async unarchive(id) {
			board.calls.push({ method: "unarchive", args: [id] });
			must(board, id).archived = false;
			changed(id);
		},
		async rename(id, name) {
			board.calls.push({ method: "rename", args: [id, name] });
			if (!name.trim()) throw new Error("name must be a non-empty string");
			must(board, id).name = name.trim();
			changed(id);
		},
		async pin(id, pinned) {
			board.calls.push({ method: "pin", args: [id, pinned] });
			must(board, id).pinned = pinned;
			changed(id);
		},
		async markViewed(id) {
			board.calls.push({ method: "markViewed", args: [id] });
			must(board, id).lastViewedAt = Date.now();
			changed(id);
		},
		async removeWorktree(id) {
			board.calls.push({ method: "removeWorktree", args: [id] });
			must(board, id).worktreePath = undefined;
			changed(id);
			return {};
		},
		async dispatchAttempts(options: DispatchOptions) {
			const count = options.count ?? 1;
			const setId = `set-${++seq}`;
			const rows: BoardRow[] = [];
			for (let index = 1; index <= count; index++) {
				const row = await board.dispatch({ ...options, count: undefined });
				if (count > 1) row.attempt = { setId, index, count };
				rows.push(row);
			}
			return rows;
		},
		async fork(id, options) {
			board.calls.push({ method: "fork", args: [id, options] });
			const source = must(board, id);
			return board.dispatchAttempts({
				prompt: options?.prompt ?? "Continue.",
				cwd: source.cwd,
				count: options?.count,
			});
		},
		async compare(id) {
			const row = must(board, id);
			const members = row.attempt ? board.rows.filter((r) => r.attempt?.setId === row.attempt?.setId) : [row];
			return {
				setId: row.attempt?.setId,
				repo: row.repo,
				rows: members.map((r) => ({
					row: r,
					files: (r.overlaps ?? []).map((o) => o.file),
					overlaps: r.overlaps ?? [],
				})),
			};
		},
		async compareDiff(a, b) {
			board.calls.push({ method: "compareDiff", args: [a, b] });
			return [`diff --git a/${a} b/${b}`];
		},
		async merge(id, options) {
			board.calls.push({ method: "merge", args: [id, options] });
			const row = must(board, id);
			const plan = {
				rowId: id,
				branch: row.branch ?? `agent-board/${id}`,
				worktreePath: row.worktreePath ?? "",
				repo: row.repo ?? "",
				into: "main",
				head: "0".repeat(40),
				uncommitted: [],
				commits: 1,
				files: [],
			};
			if (options?.dryRun) return { status: "planned", plan };
			row.merged = { at: Date.now(), commit: "1".repeat(40), into: "main" };
			version += 1;
			return { status: "merged", plan, commit: row.merged.commit, fastForward: true };
		},
		async version() {
			return String(version);
		},
		watch(onChange) {
			watchers.add(onChange);
			return () => watchers.delete(onChange);
		},
		targets: {
			async list() {
				return [
					{
						name: "local",
						kind: "local",
						where: "this machine",
						max: limits.local ?? 4,
						running: board.rows.filter((row) => row.alive).length,
						queued: 0,
					},
				];
			},
			async add(name) {
				board.calls.push({ method: "targets.add", args: [name] });
				throw new Error("the fake board has no targets");
			},
			async remove(name) {
				board.calls.push({ method: "targets.remove", args: [name] });
			},
			async check(name) {
				return { target: name, ok: false, items: [] };
			},
			async setLimit(name, max) {
				board.calls.push({ method: "targets.setLimit", args: [name, max] });
				limits[name] = max;
			},
			async set(name) {
				board.calls.push({ method: "targets.set", args: [name] });
				throw new Error("the fake board has no targets");
			},
			async drain(name, drained) {
				board.calls.push({ method: "targets.drain", args: [name, drained] });
				throw new Error("the fake board has no targets");
			},
		},
	};
	const limits: Record<string, number> = {};
	return board;
}

function must(board: FakeBoard, id: string): BoardRow {
	const row = board.rows.find((r) => r.id === id);
	if (!row) throw new Error(`no row ${id}`);
	return row;
}

export const KEY = {
	up: "\x1b[A",
	down: "\x1b[B",
	left: "\x1b[D",
	right: "\x1b[C",
	enter: "\r",
	esc: "\x1b",
	tab: "\t",
	shiftEnter: "\x1b[13;2~",
};
export const plainTheme = { fg: (_color: string, text: string) => text, bold: (text: string) => text };

export async function settle(): Promise<void> {
	for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Waits for the fake's change reports to reach the feed (they go out on a short timer). */
export async function flushReports(): Promise<void> {
	await new Promise((resolve) => setTimeout(resolve, 15));
	await settle();
}
