/**
 * Contract between the board engine (service, runner, store) and its consumers (dashboard,
 * commands, LLM tools). The engine owns the implementation; consumers import only these types and
 * the service created by `createBoardService` in `service.ts`.
 */

import type { Static } from "typebox";
import type {
	AttemptSchema,
	BudgetStatusSchema,
	LimitSchema,
	LinkSchema,
	DeliveryKindSchema,
	EventSchema,
	LiveSchema,
	MergedSchema,
	MergeIntentSchema,
	MetaSchema,
	ProcessRecordSchema,
	ReceiptSchema,
	RunStateSchema,
	SlotOwnerSchema,
	StatusSchema,
	ThinkingSchema,
	UsageSchema,
	WorktreeModeSchema,
} from "./schemas.ts";
import type { ReasonCode } from "../../../runner/life/reasons.mjs";

// Store files and their parts: derived from the shapes the reader checks (schemas.ts), never restated.
export type RowState = Static<typeof RunStateSchema>;
export type WorktreeMode = Static<typeof WorktreeModeSchema>;
export type ThinkingLevel = Static<typeof ThinkingSchema>;
export type DeliveryKind = Static<typeof DeliveryKindSchema>;
export type RowUsage = Static<typeof UsageSchema>;
/** What the agent is doing right now (from the runner's status; absent when the run ended). */
export type LiveView = Static<typeof LiveSchema>;
/** The runner's answer to one message dropped in a run's inbox. */
export type Receipt = Static<typeof ReceiptSchema>;
export type BoardEvent = Static<typeof EventSchema>;
export type AttemptInfo = Static<typeof AttemptSchema>;
export type MergedInfo = Static<typeof MergedSchema>;
export type MergeIntent = Static<typeof MergeIntentSchema>;
/** rows/<id>/meta.json. */
export type RowMeta = Static<typeof MetaSchema>;
/** runs/<runId>/status.json (the runner's RunStatus). */
export type RunStatus = Static<typeof StatusSchema>;
/** runner.json / worker.json: a pid is only ever trusted together with its start time. */
export type ProcessRecord = Static<typeof ProcessRecordSchema>;
/** slots/slot-<n>.json. */
export type SlotOwner = Static<typeof SlotOwnerSchema>;
export type { ReasonCode };
/**
 * A target's entry in config.json: the fields every kind has, and its kind's own (runner/kinds/: each
 * kind states them once, and config.json, run.json and `targets add` are checked from that).
 */
export interface TargetConfig {
	kind: string;
	/** Runs there at a time. */
	max: number;
	/** Variables forwarded to its workers, by name. */
	env: string[];
	[field: string]: unknown;
}
/** A run's copy of its target's config (run.json /target): the entry and its name. */
export type TargetSnapshot = TargetConfig & { name: string };
/** <store>/config.json, checked by its one reader (runner/life/board-config.mjs). */
export interface BoardConfig {
	version: number;
	/** The local concurrency limit (AGENT_BOARD_MAX_RUNNING is only its default). */
	maxRunning?: number;
	targets: Record<string, TargetConfig>;
}
/** A target run's connection as its link mirrors it. */
export type LinkState = Static<typeof LinkSchema>;
/** A budget in tokens and/or cost. */
export type BudgetLimit = Static<typeof LimitSchema>;
/** Spend against the budget nearest its limit (the runner's last check). */
export type BudgetView = Static<typeof BudgetStatusSchema>;

export interface DiffStats {
	added: number;
	removed: number;
	files: number;
}

export interface ReplyOptions {
	/** Working row: queue the text after the current turn instead of steering it in. */
	followUp?: boolean;
	/** How long to wait for the runner's receipt before returning "pending" (ms). */
	receiptTimeoutMs?: number;
}

export interface ReplyResult {
	row: BoardRow;
	/**
	 * steer / followUp / answer: delivered into the running worker; new-run: a new run on the same
	 * session (the row was finished or parked); queued: waits in the inbox of a run that has not started;
	 * pending: dropped in the inbox, no receipt yet; budget / stopped: a row paused by its budget was
	 * raised (the same worker goes on) or stopped.
	 */
	delivery: DeliveryKind | "new-run" | "queued" | "pending" | "budget" | "stopped";
	receipt?: Receipt;
}

/**
 * What a stop did: `stopped` (the run ended by it), `requested` (the stop waits in the run's inbox for its
 * owner: a target run whose target cannot be reached now), `ended` (the run had ended before: nothing done).
 */
export interface StopResult {
	row: BoardRow;
	outcome: "stopped" | "requested" | "ended";
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
	/** What the agent is doing now (working or waiting for an answer in place). */
	live?: LiveView;
	/** The model that actually answered (provider/id), from the worker's messages. */
	modelUsed?: string;
	/** Latest receipts of messages sent to the current run, oldest first. */
	receipts?: Receipt[];
	/** Why a queued run cannot start yet (e.g. the slots directory is unreadable), or why a live one cannot write (disk full). */
	blockedReason?: string;
	/** For programs: why the row failed or is blocked ("disk-full"); `error`/`blockedReason` say it for people. */
	errorCode?: ReasonCode;
	/** Member of an attempt set (dispatch --count N, or fork N). */
	attempt?: AttemptInfo;
	/** Set once the row's branch was merged into the main checkout (persists in meta.json). */
	merged?: MergedInfo;
	/** Files this row changed that other unmerged worktree rows of the same repo changed too. */
	overlaps?: FileOverlap[];
	/** Where the row runs: a target's name; absent: this machine ("local"). */
	target?: string;
	/** The target its run runs on, once its link has it: the target itself, or a pool's member ("on build/box2"). */
	host?: string;
	/** A target run whose target cannot be reached: since when, and why (the run goes on there). */
	unreachable?: { since: number; reason: string };
	/** Spend against budget (the runner's last check), paused when a budget stopped the run between turns. */
	budget?: BudgetView;
	/** The row's own budget (meta.json), whether or not a run has checked it yet. */
	budgetLimit?: BudgetLimit;
	/** Why the supervisor left the waiting question to the user ("asked you because: ..."). */
	supervisorNote?: string;
	/** The preset the row was dispatched with. */
	preset?: string;
}

export interface FileOverlap {
	file: string;
	/** Other rows that changed the file. */
	rows: string[];
}

export interface DispatchOptions {
	prompt: string;
	name?: string;
	cwd: string;
	model?: string;
	thinking?: ThinkingLevel;
	worktreeMode?: WorktreeMode;
	ponytailMode?: string;
	/** Start this many rows of the prompt as one attempt set, each in its own worktree (1-8). */
	count?: number;
	/** Row id whose conversation the new row(s) continue (a fork of its session file). */
	forkFrom?: string;
	/** Where to run: a target's name (default: local). A target always gets its own worktree. */
	target?: string;
	/** A preset's name (~/.pi/agent/agents/, a trusted project's .pi/agents/): its values fill what is not given. */
	preset?: string;
	/** How much each row may spend. */
	budget?: BudgetLimit;
	/** How much the attempt set may spend in all. */
	setBudget?: BudgetLimit;
}

/** One attempt set (or a single worktree row) as compare shows it. */
export interface AttemptSetView {
	setId?: string;
	repo?: string;
	rows: AttemptRowView[];
}

export interface AttemptRowView {
	row: BoardRow;
	/** Files changed against the branch point, committed or not (worktree rows). */
	files: string[];
	overlaps: FileOverlap[];
}

export interface MergeOptions {
	/** Commit uncommitted worktree changes on the row's branch first (the user confirmed it). */
	commit?: boolean;
	/** Only compute the plan; change nothing. */
	dryRun?: boolean;
}

/** What a merge will do, shown before it runs. */
export interface MergePlan {
	rowId: string;
	branch: string;
	worktreePath: string;
	repo: string;
	/** Branch of the main checkout that receives the merge. */
	into: string;
	head: string;
	/** Uncommitted paths in the row's worktree (git status --porcelain lines). */
	uncommitted: string[];
	/** Commits on the row's branch that the current branch lacks. */
	commits: number;
	/** Files the merge changes in the main checkout (after committing the uncommitted ones). */
	files: string[];
}

export type MergeResult =
	| { status: "planned"; plan: MergePlan }
	| { status: "merged"; plan: MergePlan; commit: string; fastForward: boolean; committed?: string }
	| { status: "conflict"; plan: MergePlan; files: string[]; committed?: string; followUp: string };

export interface BoardService {
	/** Directory of the store (roster, rows, sessions). */
	readonly storeDir: string;
	/** One row; with `count` > 1 or `forkFrom` it starts the whole set and returns its first row. */
	dispatch(options: DispatchOptions): Promise<BoardRow>;
	/** Every row started for `options` (one, or an attempt set of `count`). */
	dispatchAttempts(options: DispatchOptions): Promise<BoardRow[]>;
	/** All rows (archived included only when asked), as read: a run whose owner died reads as failed. Reads only. */
	/** `slim`: ended runs' events, stderr tail, receipts and whole answer may be left out (what a list line needs). */
	list(options?: { includeArchived?: boolean; slim?: boolean }): Promise<BoardRow[]>;
	get(id: string, options?: { slim?: boolean }): Promise<BoardRow | undefined>;
	/**
	 * Writes what reads found (the settle step: pump the queue, record derived ends, relink target runs,
	 * settle merges, tidy live marks), on a store this process may write; `all`: every row, as list's own
	 * pump. Returns the ids of rows it changed.
	 */
	supervise?(options?: { all?: boolean }): Promise<readonly string[]>;
	/** The rows that count in the footer and strip (live or asking), from the live summary: no store pass. */
	liveRows?(): Promise<BoardRow[]>;
	/** Every row id, oldest first (ids are time-sortable); names only, no row is read. */
	rowIds?(): Promise<string[]>;
	/** One reply for every state: steer/follow-up a working row, answer a question, or resume a finished row. */
	reply(id: string, text: string, options?: ReplyOptions): Promise<ReplyResult>;
	stop(id: string): Promise<BoardRow>;
	/** The same stop, saying what it did (the `stop` subcommand's words). */
	stopOutcome(id: string): Promise<StopResult>;
	archive(id: string): Promise<void>;
	unarchive(id: string): Promise<void>;
	rename(id: string, name: string): Promise<void>;
	pin(id: string, pinned: boolean): Promise<void>;
	markViewed(id: string): Promise<void>;
	/** `far`: a target row's workspace there, removed too or where it stays (one sentence). */
	removeWorktree(id: string, options?: { force?: boolean }): Promise<{ far?: string }>;
	/** Cheap change detector for pollers: changes whenever any row's files change (stat based). */
	version(): Promise<string>;
	/**
	 * One shared change feed for the dashboard, footer and strip: calls back with the ids of rows whose
	 * files changed (fs.watch on the store's notify/ directory, plus a slow safety poll that reports
	 * every row). `words`: rows whose streamed words grew since (words/, runner/live-words.mjs), not also
	 * in `ids`; `words()` reads those alone. Returns the unsubscribe function.
	 */
	watch(onChange: (ids: readonly string[], words?: readonly string[]) => void): () => void;
	/** The row with its run's newest streamed words (one small read), or the same row. */
	words?(row: BoardRow): BoardRow;
	/** Start N rows from a copy of a row's conversation, each in a fresh worktree. */
	fork(id: string, options?: { count?: number; prompt?: string }): Promise<BoardRow[]>;
	/** The attempt set of a row (or the row alone): states, touched files, overlaps. */
	compare(id: string): Promise<AttemptSetView>;
	/** Unified diff between two rows' current worktree trees (uncommitted changes included). */
	compareDiff(a: string, b: string): Promise<string[]>;
	/** Merge a finished worktree row's branch into the main checkout's current branch. */
	merge(id: string, options?: MergeOptions): Promise<MergeResult>;
	/** Where rows run: this machine and the board's targets (ssh hosts, containers), with their limits. */
	readonly targets: TargetsApi;
	/** Sets a row's budget (or, when a set, target or day budget paused it, that one); a paused run goes on. */
	budget?(id: string, amount: BudgetLimit): Promise<BudgetResult>;
	/** The presets a dispatch from `cwd` may name. */
	presets?(cwd: string): PresetSummary[];
}

export interface BudgetResult {
	row: BoardRow;
	/** Which budget changed. */
	scope: "row" | "set" | "target" | "day";
	/** resumed: the paused worker goes on in place; new-run: the paused run had parked, a new run continues; set: nothing was paused. */
	outcome: "resumed" | "new-run" | "set";
}

/** A preset as the new-agent form lists it. */
export interface PresetSummary {
	name: string;
	description: string;
	source: "user" | "project";
	model?: string;
	thinking?: ThinkingLevel;
	ponytailMode?: string;
	target?: string;
	worktreeMode?: WorktreeMode;
	attempts?: number;
	budget?: BudgetLimit;
	/** Why the file could not be used, when it cannot. */
	error?: string;
}

/** One line per requirement of `targets check`: ok, or what is wrong and how to fix it. */
export interface CheckItem {
	name: string;
	ok: boolean;
	detail: string;
	fix?: string;
}

/** What a check is doing, as it goes (`targets check` shows it). */
export interface CheckProgress {
	checking(what: string): void;
	item(item: CheckItem): void;
}

/** A target as `targets add` (or a tool) describes it: its kind and its fields as given. */
export type TargetInput = { kind: string; max?: number; env?: string[] } & Record<string, unknown>;

export interface TargetView {
	name: string;
	kind: string;
	/** One line: where runs go ("this machine", "ssh dev (dir .agent-board)", "podman image x"). */
	where: string;
	max: number;
	running: number;
	queued: number;
	/** Rows there that cannot reach it: the oldest since, and its reason. */
	unreachable?: { since: number; reason: string };
	config?: TargetConfig;
	/** What `targets check <name>` wants after an add ("--install"). */
	checkArgs?: string;
	/** A pool: its members (each is a target of its own in the list). */
	members?: string[];
	/** The far side's 1-minute load at its last frame, and its cores. */
	load?: { load: number; cpus: number; at: number };
	/** Whether a pool may place runs there now, and why not ("unreachable: ...", "failing its check: ...", "full"). */
	takes?: { ok: boolean; why?: string };
	/** `targets drain`: it takes nothing new; what runs there finishes. */
	drained?: boolean;
	/** Its last `targets check`: when, and its first problem. */
	check?: { at: number; ok: boolean; failing?: string };
}

export interface TargetCheck {
	target: string;
	ok: boolean;
	items: CheckItem[];
}

/** Where rows run: this machine ("local") and the board's targets, with their limits. */
export interface TargetsApi {
	list(): Promise<TargetView[]>;
	add(name: string, input: TargetInput): Promise<TargetView>;
	remove(name: string): Promise<void>;
	/** `progress`: what is being checked, and each line as soon as it is known. */
	check(name: string, options?: { install?: boolean; progress?: CheckProgress }): Promise<TargetCheck>;
	/** The concurrency limit of a target, or of this machine ("local"). */
	setLimit(name: string, max: number): Promise<void>;
	/** A target's fields changed in place (`--max 3`, as `targets add` takes them): for the next placement. */
	set(name: string, given: Map<string, string | string[]>): Promise<TargetView>;
	/** A target takes nothing new (its runs finish), or takes runs again. */
	drain(name: string, drained: boolean): Promise<TargetView>;
}
