/**
 * Contract between the board engine (service, runner, store) and its consumers (dashboard,
 * commands, LLM tools). The engine owns the implementation; consumers import only these types and
 * the service created by `createBoardService` in `service.ts`.
 */

export type RowState = "queued" | "working" | "needs_input" | "completed" | "idle" | "failed" | "stopped" | "error";
export type WorktreeMode = "none" | "auto" | "worktree";
export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh";

export interface RowUsage {
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
	totalTokens: number;
	cost: number;
}

export interface DiffStats {
	added: number;
	removed: number;
	files: number;
}

export interface BoardEvent {
	at: number;
	/** Short human line: "tool bash: npm test", "assistant: Done.", "error: ..." */
	text: string;
}

/** One row as consumers see it: stable meta merged with derived state (reconciled on read). */
export interface BoardRow {
	id: string;
	name: string;
	cwd: string;
	/** git toplevel of cwd, when it is a repo. */
	repo?: string;
	sessionFile: string;
	createdAt: number;
	updatedAt: number;
	pinned: boolean;
	archived: boolean;
	model?: string;
	thinking?: ThinkingLevel;
	worktreeMode: WorktreeMode;
	worktreePath?: string;
	branch?: string;
	ponytailMode?: string;
	state: RowState;
	/** Process liveness of the current run's worker/runner. */
	alive: boolean;
	summary: string;
	/** Exact question when state is needs_input. */
	question?: string;
	latestAssistant?: string;
	currentTool?: string;
	error?: string;
	usage?: RowUsage;
	diff?: DiffStats;
	currentRunId?: string;
	/** Milliseconds epoch of the last state change; unread = lastActivityAt > lastViewedAt. */
	lastActivityAt: number;
	lastViewedAt?: number;
	recentEvents: BoardEvent[];
	/** Choices offered by the worker's ask_user call, when state is needs_input. */
	questionOptions?: string[];
	/** Current run timing and exit (engine extension; absent for error rows). */
	startedAt?: number;
	endedAt?: number;
	exitCode?: number;
	/** Last few KB of the worker's stderr. */
	stderrTail?: string;
	/** Directory of the current run: status.json, events.jsonl, stderr.log, runner.json, worker.json. */
	runDir?: string;
}

export interface DispatchOptions {
	prompt: string;
	name?: string;
	cwd: string;
	model?: string;
	thinking?: ThinkingLevel;
	worktreeMode?: WorktreeMode;
	ponytailMode?: string;
}

export interface BoardService {
	/** Directory of the store (roster, rows, sessions). */
	readonly storeDir: string;
	dispatch(options: DispatchOptions): Promise<BoardRow>;
	/** All rows (archived included only when asked), reconciled: dead runners become failed. */
	list(options?: { includeArchived?: boolean }): Promise<BoardRow[]>;
	get(id: string): Promise<BoardRow | undefined>;
	reply(id: string, prompt: string): Promise<BoardRow>;
	stop(id: string): Promise<BoardRow>;
	archive(id: string): Promise<void>;
	unarchive(id: string): Promise<void>;
	rename(id: string, name: string): Promise<void>;
	pin(id: string, pinned: boolean): Promise<void>;
	markViewed(id: string): Promise<void>;
	removeWorktree(id: string, options?: { force?: boolean }): Promise<void>;
	/** Cheap change detector for pollers: changes whenever any row's files change (stat based). */
	version(): Promise<string>;
}
