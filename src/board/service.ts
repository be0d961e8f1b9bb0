/** The board engine's API: every consumer (dashboard, commands, LLM tools) goes through here. */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { DIR_MODE, ensureDir, touchNotify } from "../../runner/fs-util.mjs";
import { pumpQueue, queueDir } from "../../runner/queue.mjs";
import { withRowLock } from "../../runner/row-lock.mjs";
import { runEnded } from "../../runner/state-rules.mjs";
import { newId, validateId } from "./ids.ts";
import { newRunId, nodeCommand, prepareRun, queueRun, resolvePiCommand } from "./launch.ts";
import { defaultStoreDir, storePaths, type StorePaths } from "./paths.ts";
import { checkDispatch, checkMessage, checkPrompt } from "./dispatch-checks.ts";
import { controlRun } from "./run-control.ts";
import { recordOrphanEnd, runOwner } from "./run-liveness.ts";
import { seedFork, withAttempts } from "./attempts.ts";
import { describeFsError, guardStore, removeHalfRow } from "./store-guard.ts";
import { StoreWatch } from "./store-watch.ts";
import { errorReason, errorRow, FileCache, listRowIds, readEventsFile, readMeta, readStatus, rowFrom, writeMeta } from "./store.ts";
import type { BoardRow, BoardService, DiffStats, DispatchOptions, RowMeta, RunStatus } from "./types.ts";
import { createWorktree, diffStats, removeWorktreeDir } from "./worktree.ts";

export interface BoardServiceOptions {
	storeDir?: string;
	piCommand?: string[];
	maxConcurrent?: number;
	/** Grace before a stop escalates from abort to signals (ms). */
	stopGraceMs?: number;
	/** Environment for the store defaults, runners and workers (default process.env). */
	env?: NodeJS.ProcessEnv;
	/** watch(): interval of the safety poll behind fs.watch (default 10 s). */
	safetyPollMs?: number;
}

/** The service plus engine extras that are not part of the dashboard contract. */
export interface BoardEngine extends BoardService {
	/** Compact worker events of the current run (events.jsonl), oldest first; `limit` keeps the last N. */
	events(id: string, options?: { limit?: number }): Promise<Record<string, unknown>[]>;
	/** Diff stats of a worktree row against its branch point (runs git). */
	diff(id: string): Promise<DiffStats | undefined>;
	/** Starts queued runs while slots are free (every read does this too). */
	pump(): void;
}

const PUMP_MIN_INTERVAL_MS = 200;
/** Safety polls between full store hashes (a missed inotify event is picked up within this many polls). */
const FULL_CHECK_EVERY = 6;

export function createBoardService(options: BoardServiceOptions = {}): BoardEngine {
	const env = options.env ?? process.env;
	const storeDir = resolve(options.storeDir ?? defaultStoreDir(env));
	const paths = storePaths(storeDir);
	const maxConcurrent = options.maxConcurrent ?? (Number(env.AGENT_BOARD_MAX_RUNNING) > 0 ? Number(env.AGENT_BOARD_MAX_RUNNING) : 4);
	const summaryModel = env.AGENT_BOARD_SUMMARY_MODEL && env.AGENT_BOARD_SUMMARY_MODEL !== "off" ? env.AGENT_BOARD_SUMMARY_MODEL : undefined;
	const cache = new FileCache();
	let piCommand: string[] | undefined = options.piCommand;
	let lastPump = 0;
	let queueBlocked: string | undefined;
	let lastKeys = new Map<string, string>();

	/** Creates the store's directories; a read-only store is still readable, so failures wait for a write. */
	function init(): void {
		// Refuse a foreign or group/world-writable store before touching it.
		guardStore(paths.root);
		for (const dir of [paths.root, paths.rows, paths.sessions, paths.slots, paths.worktrees, queueDir(storeDir)]) ensureDir(dir);
	}

	function tryInit(): void {
		try {
			init();
		} catch {
			// Listing must keep working on a read-only or full store.
		}
	}

	function command(): string[] {
		piCommand ??= resolvePiCommand(env);
		return piCommand;
	}

	function pump(force = false): void {
		if (!force && Date.now() - lastPump < PUMP_MIN_INTERVAL_MS) return;
		lastPump = Date.now();
		const result = pumpQueue(storeDir, { maxConcurrent, node: nodeCommand(env), env });
		queueBlocked = result.error;
	}

	function readRow(id: string): BoardRow {
		let meta: RowMeta;
		try {
			meta = readMeta(paths, id, cache);
		} catch (error) {
			return errorRow(paths, id, errorReason(error, "meta.json"));
		}
		const runDir = paths.run(id, meta.currentRunId);
		let status: RunStatus;
		try {
			status = readStatus(runDir, cache);
		} catch (error) {
			return { ...errorRow(paths, id, errorReason(error, "status.json"), meta), runDir };
		}
		let owner = runOwner(storeDir, runDir, status);
		if (owner === "none" && !runEnded(status)) {
			try {
				status = recordOrphanEnd(paths.row(id), runDir, storeDir, id, "died");
			} catch {
				// A read-only or full store cannot record the death now; the next read tries again.
			}
			owner = runOwner(storeDir, runDir, status);
		}
		const row = rowFrom(meta, status, owner === "runner" || owner === "starting");
		// Rows with a live or queued run are the ones the safety poll re-checks.
		if (row.alive || owner === "queue") ownerSeen.set(id, ownerSeen.get(id) ?? `${row.state}:${row.alive}`);
		row.runDir = runDir;
		row.live = runEnded(status) ? undefined : status.live;
		row.modelUsed = status.model;
		row.receipts = status.receipts;
		if (owner === "queue" && queueBlocked) row.blockedReason = queueBlocked;
		return row;
	}

	function requireMeta(id: string): RowMeta {
		validateId(id);
		if (!existsSync(paths.row(id))) throw new Error(`no such row: ${id}`);
		return readMeta(paths, id, cache);
	}

	/** meta.json changes only under the row lock: no read-modify-write race across pi processes. */
	async function updateMeta(id: string, change: (meta: RowMeta) => void): Promise<void> {
		validateId(id);
		try {
			await withRowLock(paths.row(id), () => changeMetaLocked(id, change));
		} catch (error) {
			throw describeFsError(error, (error as NodeJS.ErrnoException).path ?? paths.meta(id), "cannot write");
		}
	}

	function changeMetaLocked(id: string, change: (meta: RowMeta) => void): void {
		const meta = { ...requireMeta(id) };
		change(meta);
		meta.updatedAt = Date.now();
		writeMeta(paths, meta);
		touchNotify(storeDir, id);
	}

	function activeWriterInRepo(repo: string): boolean {
		return listRowIds(paths).some((id) => {
			const row = readRow(id);
			return row.repo === repo && !row.worktreePath && (row.alive || row.state === "queued");
		});
	}

	/** Prepares a run for `meta` (whose currentRunId names it), writes meta, queues the run and pumps. */
	function launch(meta: RowMeta, prompt: string): void {
		const prepared = prepareRun({ paths, meta, prompt, piCommand: command(), maxConcurrent, summaryModel, stopGraceMs: options.stopGraceMs });
		writeMeta(paths, meta);
		queueRun(paths, meta, prepared.runDir);
		touchNotify(storeDir, meta.id);
		try {
			pump(true);
		} catch {
			// The run is queued; a later read starts it or says why it cannot start.
		}
	}

	async function dispatch(options: DispatchOptions): Promise<BoardRow> {
		init();
		const prompt = checkPrompt(options.prompt);
		const { cwd, worktreeMode, repo } = checkDispatch(options);
		const id = newId("");
		const rowDir = paths.row(id);
		const now = Date.now();
		const meta: RowMeta = {
			version: 1,
			id,
			name: options.name?.trim() || prompt.replace(/\s+/g, " ").trim().slice(0, 60),
			cwd,
			runCwd: cwd,
			repo,
			sessionFile: paths.session(id),
			createdAt: now,
			updatedAt: now,
			pinned: false,
			archived: false,
			model: options.model,
			thinking: options.thinking,
			worktreeMode,
			ponytailMode: options.ponytailMode,
			currentRunId: newRunId(),
		};
		try {
			mkdirSync(rowDir, { mode: DIR_MODE });
		} catch (error) {
			throw describeFsError(error, rowDir, "cannot create row");
		}
		try {
			const isolate = repo && (worktreeMode === "worktree" || (worktreeMode === "auto" && activeWriterInRepo(repo)));
			if (repo && isolate) {
				const created = createWorktree(repo, cwd, id, paths.worktree(id));
				meta.worktreePath = created.path;
				meta.branch = created.branch;
				meta.baseCommit = created.baseCommit;
				meta.runCwd = created.runCwd;
			}
			if (options.forkFrom) seedFork(requireMeta(options.forkFrom).sessionFile, meta.sessionFile, meta.runCwd);
			launch(meta, prompt);
		} catch (error) {
			// A failed dispatch leaves nothing behind: the row directory is ours, created just now.
			removeHalfRow(paths.rows, id);
			if (meta.worktreePath && repo) {
				try {
					removeWorktreeDir(repo, meta.worktreePath, true);
				} catch {
					// Best effort: the error below names the cause.
				}
			}
			const described = describeFsError(error, (error as NodeJS.ErrnoException).path ?? rowDir, "dispatch failed, cannot write");
			throw described.message.startsWith("dispatch failed") ? described : new Error(`dispatch failed: ${described.message}`);
		}
		return readRow(id);
	}

	const control = controlRun({
		paths,
		readRow,
		requireMeta,
		checkMessage,
		stopGraceMs: options.stopGraceMs ?? 3000,
		resume(meta, prompt) {
			if (!existsSync(meta.runCwd)) throw new Error(`working directory does not exist: ${meta.runCwd}`);
			const next = { ...meta, currentRunId: newRunId(), updatedAt: Date.now() };
			launch(next, prompt);
		},
	});

	/** Per-row change key from the cached reads' stat keys (and liveness, which changes no file). */
	function rowKeys(): Map<string, string> {
		const keys = new Map<string, string>();
		for (const id of listRowIds(paths)) {
			let key = "";
			let statusPath = "";
			try {
				const current = readMeta(paths, id, cache);
				const runDir = paths.run(id, current.currentRunId);
				statusPath = join(runDir, "status.json");
				const status = readStatus(runDir, cache);
				// A SIGKILLed runner changes no file; its liveness must still change the key.
				if (!runEnded(status)) key += runOwner(storeDir, runDir, status);
			} catch (error) {
				key += errorReason(error, id);
			}
			key += `|${cache.keyOf(paths.meta(id))}`;
			if (statusPath) key += `|${cache.keyOf(statusPath)}`;
			keys.set(id, key);
		}
		return keys;
	}

	function version(): string {
		const hash = createHash("sha1");
		for (const [id, key] of rowKeys()) hash.update(`${id}\0${key}\0`);
		return hash.digest("hex").slice(0, 16);
	}

	/**
	 * What inotify cannot see: a runner killed with SIGKILL changes no file, so rows whose run was live
	 * at the last look are re-checked; rows appearing or vanishing show in one readdir. The whole
	 * store is hashed only every FULL_CHECK_EVERY polls, so an idle board's cost does not grow with rows.
	 */
	let safetyPolls = 0;
	let knownIds = new Set<string>();
	const ownerSeen = new Map<string, string>();
	async function safetyCheck(): Promise<string[]> {
		tryInit();
		try {
			pump();
		} catch {
			// Reported on the rows by the next read.
		}
		const ids = listRowIds(paths);
		const changed = new Set<string>();
		const current = new Set(ids);
		if (safetyPolls++ === 0) {
			// Subscribers read the whole board when they subscribe: the first poll only sets the baseline.
			knownIds = current;
			lastKeys = rowKeys();
			for (const id of [...ownerSeen.keys()]) {
				const row = current.has(id) ? readRow(id) : undefined;
				if (row && (row.alive || row.state === "queued")) ownerSeen.set(id, `${row.state}:${row.alive}`);
				else ownerSeen.delete(id);
			}
			return [];
		}
		for (const id of ids) if (!knownIds.has(id)) changed.add(id);
		for (const id of knownIds) if (!current.has(id)) changed.add(id);
		knownIds = current;
		for (const [id, before] of ownerSeen) {
			const row = current.has(id) ? readRow(id) : undefined;
			const now = row ? `${row.state}:${row.alive}` : "gone";
			if (now !== before) changed.add(id);
			if (!row || (!row.alive && row.state !== "queued")) ownerSeen.delete(id);
			else ownerSeen.set(id, now);
		}
		if (safetyPolls % FULL_CHECK_EVERY === 0) {
			const next = rowKeys();
			for (const [id, key] of next) if (lastKeys.get(id) !== key) changed.add(id);
			lastKeys = next;
		}
		return [...changed];
	}

	const storeWatch = new StoreWatch({ storeRoot: storeDir, safetyCheck, safetyPollMs: options.safetyPollMs });

	return withAttempts({
		storeDir,
		dispatch,
		reply: control.reply,
		stop: control.stop,
		pump: () => pump(true),
		async list(listOptions) {
			guardStore(paths.root);
			tryInit();
			try {
				pump();
			} catch {
				// A queue that cannot start says why on its rows.
			}
			const rows = listRowIds(paths).map((id) => readRow(id));
			return listOptions?.includeArchived ? rows : rows.filter((row) => !row.archived);
		},
		async get(id) {
			validateId(id);
			if (!existsSync(paths.row(id))) return undefined;
			try {
				pump();
			} catch {
				// Reported on the rows.
			}
			return readRow(id);
		},
		async archive(id) {
			await updateMeta(id, (meta) => (meta.archived = true));
		},
		async unarchive(id) {
			await updateMeta(id, (meta) => (meta.archived = false));
		},
		async rename(id, name) {
			if (typeof name !== "string" || !name.trim()) throw new Error("name must be a non-empty string");
			await updateMeta(id, (meta) => (meta.name = name.trim()));
		},
		async pin(id, pinned) {
			await updateMeta(id, (meta) => (meta.pinned = pinned));
		},
		async markViewed(id) {
			await updateMeta(id, (meta) => (meta.lastViewedAt = Date.now()));
		},
		async removeWorktree(id, removeOptions) {
			await withRowLock(paths.row(id), () => {
				const meta = requireMeta(id);
				if (!meta.worktreePath || !meta.repo) throw new Error(`row ${id} has no worktree`);
				const row = readRow(id);
				if (row.alive || row.state === "queued") throw new Error(`row ${id} is still ${row.state}; stop it first`);
				removeWorktreeDir(meta.repo, meta.worktreePath, removeOptions?.force === true);
				writeMeta(paths, { ...meta, worktreePath: undefined, updatedAt: Date.now() });
				touchNotify(storeDir, id);
			});
		},
		async events(id, eventOptions) {
			const meta = requireMeta(id);
			const events = readEventsFile(join(paths.run(id, meta.currentRunId), "events.jsonl"));
			return eventOptions?.limit ? events.slice(-eventOptions.limit) : events;
		},
		async diff(id) {
			const meta = requireMeta(id);
			return meta.worktreePath ? diffStats(meta.worktreePath, meta.baseCommit) : undefined;
		},
		async version() {
			return version();
		},
		watch(onChange) {
			return storeWatch.subscribe(onChange);
		},
	}, {
		updateMeta,
		changeMetaLocked,
		withRowLock: (id, fn) => {
			validateId(id);
			if (!existsSync(paths.row(id))) throw new Error(`no such row: ${id}`);
			return withRowLock(paths.row(id), fn, { timeoutMs: 120_000 });
		},
	});
}

export type { StorePaths };
