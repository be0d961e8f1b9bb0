/** The board engine's API: every consumer (dashboard, commands, LLM tools) goes through here. */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { DIR_MODE, ensureDir, writeJsonAtomic } from "../../runner/fs-util.mjs";
import { killGroup } from "../../runner/proc.mjs";
import { isTerminal, markRunnerDied, markStopped, type RunStatus } from "../../runner/state-rules.mjs";
import { newId, validateId } from "./ids.ts";
import { newRunId, prepareRun, resolvePiCommand, startRunner } from "./launch.ts";
import { defaultStoreDir, storePaths, type StorePaths } from "./paths.ts";
import {
	errorReason,
	errorRow,
	FileCache,
	listRowIds,
	processAlive,
	readMeta,
	readProcess,
	readStatus,
	rowFrom,
	writeMeta,
	type RowMeta,
} from "./store.ts";
import type { BoardRow, BoardService, DispatchOptions, ReplyResult, ThinkingLevel, WorktreeMode } from "./types.ts";
import { describeFsError, guardStore, removeHalfRow } from "./store-guard.ts";
import { createWorktree, diffStats, removeWorktreeDir, repoRoot } from "./worktree.ts";

export interface BoardServiceOptions {
	storeDir?: string;
	piCommand?: string[];
	maxConcurrent?: number;
	/** Grace before a stop escalates to SIGKILL (ms). */
	stopGraceMs?: number;
	/** Environment for the store defaults, runners and workers (default process.env). */
	env?: NodeJS.ProcessEnv;
}

/** The service plus engine extras that are not part of the dashboard contract. */
export interface BoardEngine extends BoardService {
	/** Compact worker events of the current run (events.jsonl), oldest first; `limit` keeps the last N. */
	events(id: string, options?: { limit?: number }): Promise<Record<string, unknown>[]>;
}

const THINKING: ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];
const WORKTREE_MODES: WorktreeMode[] = ["none", "auto", "worktree"];
/** Linux MAX_ARG_STRLEN (32 pages) minus the terminating NUL: the prompt travels as one argv word. */
const MAX_PROMPT_BYTES = 131_071;
/** Diff stats run git; pollers list often, so reuse a recent result. */
const DIFF_TTL_MS = 3000;
/** A runner gets this long to record its pid before a missing runner.json counts as dead. */
const RUNNER_START_GRACE_MS = 15_000;

export function createBoardService(options: BoardServiceOptions = {}): BoardEngine {
	const env = options.env ?? process.env;
	const storeDir = resolve(options.storeDir ?? defaultStoreDir(env));
	const paths = storePaths(storeDir);
	const maxConcurrent = options.maxConcurrent ?? (Number(env.AGENT_BOARD_MAX_RUNNING) > 0 ? Number(env.AGENT_BOARD_MAX_RUNNING) : 4);
	const summaryModel = env.AGENT_BOARD_SUMMARY_MODEL && env.AGENT_BOARD_SUMMARY_MODEL !== "off" ? env.AGENT_BOARD_SUMMARY_MODEL : undefined;
	const cache = new FileCache();
	const diffs = new Map<string, { at: number; key: string; value: ReturnType<typeof diffStats> }>();
	let piCommand: string[] | undefined = options.piCommand;

	function init(): void {
		// hardening: refuse a foreign or group/world-writable store before touching it.
		guardStore(paths.root);
		for (const dir of [paths.root, paths.rows, paths.sessions, paths.slots, paths.worktrees]) ensureDir(dir);
	}

	function command(): string[] {
		piCommand ??= resolvePiCommand(env);
		return piCommand;
	}

	/** Runner gone while the status says it is still going: the run failed, and its worker must go too. */
	function reconcile(runDir: string, status: RunStatus): { status: RunStatus; alive: boolean } {
		if (isTerminal(status.state)) return { status, alive: false };
		const runner = readProcess(`${runDir}/runner.json`);
		if (runner ? processAlive(runner) : Date.now() - status.createdAt < RUNNER_START_GRACE_MS) return { status, alive: true };
		const fresh = readStatus(runDir, new FileCache());
		if (isTerminal(fresh.state)) return { status: fresh, alive: false };
		const worker = readProcess(`${runDir}/worker.json`);
		if (worker && processAlive(worker)) killGroup(worker.pid, "SIGKILL");
		if (existsSync(`${runDir}/stop-requested`)) markStopped(fresh, Date.now());
		else markRunnerDied(fresh, Date.now());
		writeJsonAtomic(`${runDir}/status.json`, fresh);
		return { status: fresh, alive: false };
	}

	function readRow(id: string, withDiff: boolean): BoardRow {
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
		const reconciled = reconcile(runDir, status);
		const row = rowFrom(meta, reconciled.status, reconciled.alive);
		row.runDir = runDir;
		if (withDiff && meta.worktreePath) row.diff = cachedDiff(id, meta.worktreePath, meta.baseCommit, `${reconciled.status.updatedAt}`);
		return row;
	}

	function cachedDiff(id: string, path: string, base: string | undefined, key: string): ReturnType<typeof diffStats> {
		const hit = diffs.get(id);
		if (hit && hit.key === key && Date.now() - hit.at < DIFF_TTL_MS) return hit.value;
		const value = diffStats(path, base);
		diffs.set(id, { at: Date.now(), key, value });
		return value;
	}

	function requireMeta(id: string): RowMeta {
		validateId(id);
		if (!existsSync(paths.row(id))) throw new Error(`no such row: ${id}`);
		return readMeta(paths, id, cache);
	}

	function updateMeta(id: string, change: (meta: RowMeta) => void): void {
		const meta = { ...requireMeta(id) };
		change(meta);
		meta.updatedAt = Date.now();
		writeMeta(paths, meta);
	}

	function activeWriterInRepo(repo: string): boolean {
		return listRowIds(paths).some((id) => {
			const row = readRow(id, false);
			return row.repo === repo && !row.worktreePath && !isTerminal(row.state) && row.state !== "error";
		});
	}

	function launch(meta: RowMeta, prompt: string, writeMetaFirst: () => void): void {
		const prepared = prepareRun({ paths, meta, prompt, piCommand: command(), maxConcurrent, summaryModel, stopGraceMs: options.stopGraceMs });
		writeMetaFirst();
		startRunner(prepared.runDir, prepared.configPath, storeDir, env);
	}

	function checkPrompt(prompt: unknown): string {
		if (typeof prompt !== "string" || prompt.trim() === "") throw new Error("prompt must be a non-empty string");
		if (prompt.includes("\0")) throw new Error("prompt contains a NUL byte, which cannot be passed to pi");
		const bytes = Buffer.byteLength(prompt);
		if (bytes > MAX_PROMPT_BYTES) throw new Error(`prompt is ${bytes} bytes; the limit is ${MAX_PROMPT_BYTES} (one command-line argument on Linux)`);
		return prompt;
	}

	async function dispatch(options: DispatchOptions): Promise<BoardRow> {
		init();
		const prompt = checkPrompt(options.prompt);
		if (typeof options.cwd !== "string" || !options.cwd) throw new Error("cwd is required");
		const cwd = resolve(options.cwd);
		let isDir = false;
		try {
			isDir = statSync(cwd).isDirectory();
		} catch {
			throw new Error(`working directory does not exist: ${cwd}`);
		}
		if (!isDir) throw new Error(`working directory is not a directory: ${cwd}`);
		if (options.thinking !== undefined && !THINKING.includes(options.thinking)) throw new Error(`invalid thinking level: ${String(options.thinking)}`);
		const worktreeMode = options.worktreeMode ?? "none";
		if (!WORKTREE_MODES.includes(worktreeMode)) throw new Error(`invalid worktree mode: ${String(worktreeMode)}`);
		const repo = repoRoot(cwd);
		if (worktreeMode === "worktree" && !repo) throw new Error(`worktree mode needs a git repository: ${cwd} is not inside one`);
		const id = newId("");
		// hardening: a dispatch that fails half way (ENOSPC, EACCES...) leaves no half row behind.
		try {
			mkdirSync(paths.row(id), { mode: DIR_MODE });
		} catch (error) {
			throw describeFsError(error, paths.row(id), "cannot create row");
		}
		try {
			return await dispatchInto(id, options, prompt, cwd, worktreeMode, repo);
		} catch (error) {
			removeHalfRow(paths.rows, id);
			throw describeFsError(error, (error as NodeJS.ErrnoException).path ?? paths.row(id), "dispatch failed, cannot write");
		}
	}

	async function dispatchInto(id: string, options: DispatchOptions, prompt: string, cwd: string, worktreeMode: WorktreeMode, repo: string | undefined): Promise<BoardRow> {
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
		const isolate = repo && (worktreeMode === "worktree" || (worktreeMode === "auto" && activeWriterInRepo(repo)));
		if (repo && isolate) {
			const created = createWorktree(repo, cwd, id, paths.worktree(id));
			meta.worktreePath = created.path;
			meta.branch = created.branch;
			meta.baseCommit = created.baseCommit;
			meta.runCwd = created.runCwd;
		}
		launch(meta, prompt, () => writeMeta(paths, meta));
		return readRow(id, true);
	}

	async function reply(id: string, prompt: string): Promise<ReplyResult> {
		checkPrompt(prompt);
		const meta = { ...requireMeta(id) };
		const current = readRow(id, false);
		if (current.state === "queued" || current.state === "working") throw new Error(`row ${id} is still ${current.state}; stop it before replying`);
		if (!existsSync(meta.runCwd)) throw new Error(`working directory does not exist: ${meta.runCwd}`);
		meta.currentRunId = newRunId();
		meta.updatedAt = Date.now();
		launch(meta, prompt, () => writeMeta(paths, meta));
		return { row: readRow(id, true), delivery: "new-run" };
	}

	async function stop(id: string): Promise<BoardRow> {
		const meta = requireMeta(id);
		const runDir = paths.run(id, meta.currentRunId);
		const row = readRow(id, false);
		if (isTerminal(row.state)) return row;
		writeFileSync(`${runDir}/stop-requested`, `${Date.now()}\n`, { mode: 0o600 });
		const runner = readProcess(`${runDir}/runner.json`);
		if (runner && processAlive(runner)) process.kill(runner.pid, "SIGTERM");
		const deadline = Date.now() + (options.stopGraceMs ?? 3000) + 3000;
		while (Date.now() < deadline) {
			const status = readStatus(runDir, new FileCache());
			if (isTerminal(status.state)) return readRow(id, true);
			// A runner signalled before it installed its handlers dies without writing; finish here.
			if (!runner || !processAlive(runner)) break;
			await new Promise((r) => setTimeout(r, 50));
		}
		// The runner did not finish the stop: do it here so the row never stays working.
		const worker = readProcess(`${runDir}/worker.json`);
		if (worker && processAlive(worker)) killGroup(worker.pid, "SIGKILL");
		if (runner && processAlive(runner)) process.kill(runner.pid, "SIGKILL");
		const status = readStatus(runDir, new FileCache());
		if (!isTerminal(status.state)) writeJsonAtomic(`${runDir}/status.json`, markStopped(status, Date.now()));
		return readRow(id, true);
	}

	return {
		storeDir,
		dispatch,
		reply,
		stop,
		async list(listOptions) {
			// hardening: list never needs a write, so it works on a read-only or full store.
			guardStore(paths.root);
			const rows = listRowIds(paths).map((id) => readRow(id, true));
			return listOptions?.includeArchived ? rows : rows.filter((row) => !row.archived);
		},
		async get(id) {
			validateId(id);
			if (!existsSync(paths.row(id))) return undefined;
			return readRow(id, true);
		},
		async archive(id) {
			updateMeta(id, (meta) => (meta.archived = true));
		},
		async unarchive(id) {
			updateMeta(id, (meta) => (meta.archived = false));
		},
		async rename(id, name) {
			if (typeof name !== "string" || !name.trim()) throw new Error("name must be a non-empty string");
			updateMeta(id, (meta) => (meta.name = name.trim()));
		},
		async pin(id, pinned) {
			updateMeta(id, (meta) => (meta.pinned = pinned));
		},
		async markViewed(id) {
			updateMeta(id, (meta) => (meta.lastViewedAt = Date.now()));
		},
		async removeWorktree(id, removeOptions) {
			const meta = requireMeta(id);
			if (!meta.worktreePath || !meta.repo) throw new Error(`row ${id} has no worktree`);
			const row = readRow(id, false);
			if (row.state === "queued" || row.state === "working") throw new Error(`row ${id} is still ${row.state}; stop it first`);
			removeWorktreeDir(meta.repo, meta.worktreePath, removeOptions?.force === true);
			updateMeta(id, (next) => (next.worktreePath = undefined));
		},
		async events(id, eventOptions) {
			const meta = requireMeta(id);
			let text: string;
			try {
				text = readFileSync(`${paths.run(id, meta.currentRunId)}/events.jsonl`, "utf8");
			} catch {
				return [];
			}
			const events: Record<string, unknown>[] = [];
			for (const line of text.split("\n")) {
				if (!line) continue;
				try {
					events.push(JSON.parse(line) as Record<string, unknown>);
				} catch {
					// A torn last line (runner mid-append) is not an event yet.
				}
			}
			return eventOptions?.limit ? events.slice(-eventOptions.limit) : events;
		},
		watch(onChange) {
			// Placeholder until the notify/ feed lands: a version poll that reports every row.
			let last = "";
			const timer = setInterval(() => {
				void this.version().then((v) => {
					if (v === last) return;
					last = v;
					onChange(listRowIds(paths));
				});
			}, 1000);
			return () => clearInterval(timer);
		},
		async version() {
			const hash = createHash("sha1");
			for (const id of listRowIds(paths)) {
				hash.update(id);
				// The cached reads stat each file once; their stat keys are what changes the version.
				let statusPath = "";
				try {
					const current = readMeta(paths, id, cache);
					const runDir = paths.run(id, current.currentRunId);
					statusPath = join(runDir, "status.json");
					const status = readStatus(runDir, cache);
					// A SIGKILLed runner changes no file; its liveness must still change the version.
					if (!isTerminal(status.state)) hash.update(processAlive(readProcess(`${runDir}/runner.json`)) ? "alive" : "gone");
				} catch (error) {
					hash.update(errorReason(error, id));
				}
				hash.update(cache.keyOf(paths.meta(id)));
				if (statusPath) hash.update(cache.keyOf(statusPath));
			}
			return hash.digest("hex").slice(0, 16);
		},
	};
}

export type { StorePaths };
