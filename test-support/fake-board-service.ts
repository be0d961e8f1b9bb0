/**
 * In-memory BoardService for dashboard component tests and benches: same contract as the engine,
 * no processes. Records every call so tests can assert what the UI asked for.
 */
import type { BoardRow, BoardService, DispatchOptions, RowState } from "../src/board/types.ts";

export interface FakeBoard extends BoardService {
	rows: BoardRow[];
	calls: { method: string; args: unknown[] }[];
	listCount: number;
	bump(): void;
	setState(id: string, state: RowState, patch?: Partial<BoardRow>): void;
}

let seq = 0;

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
		lastActivityAt: now - 30_000,
		recentEvents: [],
		...patch,
	};
}

export function createFakeBoard(initial: BoardRow[] = [], storeDir = "/tmp/fake-board"): FakeBoard {
	let version = 0;
	const board: FakeBoard = {
		storeDir,
		rows: initial,
		calls: [],
		listCount: 0,
		bump() {
			version += 1;
		},
		setState(id, state, patch = {}) {
			const row = board.rows.find((r) => r.id === id);
			if (!row) throw new Error(`no row ${id}`);
			Object.assign(row, { state, lastActivityAt: Date.now(), ...patch });
			version += 1;
		},
		async dispatch(options: DispatchOptions) {
			board.calls.push({ method: "dispatch", args: [options] });
			const row = makeRow({ name: options.name ?? options.prompt.slice(0, 30), cwd: options.cwd, model: options.model, state: "working", alive: true, summary: options.prompt });
			board.rows.push(row);
			version += 1;
			return row;
		},
		async list(options) {
			board.listCount += 1;
			return board.rows.filter((row) => options?.includeArchived || !row.archived).map((row) => ({ ...row }));
		},
		async get(id) {
			return board.rows.find((row) => row.id === id);
		},
		async reply(id, prompt, options) {
			board.calls.push({ method: "reply", args: options ? [id, prompt, options] : [id, prompt] });
			const wasAlive = must(board, id).alive;
			board.setState(id, "working", { alive: true, question: undefined });
			return { row: { ...must(board, id) }, delivery: wasAlive ? (options?.followUp ? "followUp" : "steer") : "new-run" };
		},
		async stop(id) {
			board.calls.push({ method: "stop", args: [id] });
			board.setState(id, "stopped", { alive: false });
			return { ...must(board, id) };
		},
		async archive(id) {
			board.calls.push({ method: "archive", args: [id] });
			must(board, id).archived = true;
			version += 1;
		},
		async unarchive(id) {
			board.calls.push({ method: "unarchive", args: [id] });
			must(board, id).archived = false;
			version += 1;
		},
		async rename(id, name) {
			board.calls.push({ method: "rename", args: [id, name] });
			must(board, id).name = name;
			version += 1;
		},
		async pin(id, pinned) {
			board.calls.push({ method: "pin", args: [id, pinned] });
			must(board, id).pinned = pinned;
			version += 1;
		},
		async markViewed(id) {
			board.calls.push({ method: "markViewed", args: [id] });
			must(board, id).lastViewedAt = Date.now();
			version += 1;
		},
		async removeWorktree(id) {
			board.calls.push({ method: "removeWorktree", args: [id] });
			must(board, id).worktreePath = undefined;
			version += 1;
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
			return board.dispatchAttempts({ prompt: options?.prompt ?? "Continue.", cwd: source.cwd, count: options?.count });
		},
		async compare(id) {
			const row = must(board, id);
			const members = row.attempt ? board.rows.filter((r) => r.attempt?.setId === row.attempt?.setId) : [row];
			return { setId: row.attempt?.setId, repo: row.repo, rows: members.map((r) => ({ row: r, files: (r.overlaps ?? []).map((o) => o.file), overlaps: r.overlaps ?? [] })) };
		},
		async compareDiff(a, b) {
			board.calls.push({ method: "compareDiff", args: [a, b] });
			return [`diff --git a/${a} b/${b}`];
		},
		async merge(id, options) {
			board.calls.push({ method: "merge", args: [id, options] });
			const row = must(board, id);
			const plan = { rowId: id, branch: row.branch ?? `agent-board/${id}`, worktreePath: row.worktreePath ?? "", repo: row.repo ?? "", into: "main", head: "0".repeat(40), uncommitted: [], commits: 1, files: [] };
			if (options?.dryRun) return { status: "planned", plan };
			row.merged = { at: Date.now(), commit: "1".repeat(40), into: "main" };
			version += 1;
			return { status: "merged", plan, commit: row.merged.commit, fastForward: true };
		},
		async version() {
			return String(version);
		},
		watch(onChange) {
			let seen = version;
			const timer = setInterval(() => {
				if (seen === version) return;
				seen = version;
				onChange(board.rows.map((row) => row.id));
			}, 20);
			return () => clearInterval(timer);
		},
	};
	return board;
}

function must(board: FakeBoard, id: string): BoardRow {
	const row = board.rows.find((r) => r.id === id);
	if (!row) throw new Error(`no row ${id}`);
	return row;
}
