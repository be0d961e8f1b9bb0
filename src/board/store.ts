/**
 * Reading and writing the durable store. One directory per row (rows/<id>/meta.json) so concurrent
 * dispatchers never share a read-modify-write file; run state lives in rows/<id>/runs/<runId>/.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseJsonStrict, writeJsonAtomic } from "../../runner/fs-util.mjs";
import { isAlive } from "../../runner/proc.mjs";
import type { RunStatus } from "../../runner/state-rules.mjs";
import type { BoardRow, ThinkingLevel, WorktreeMode } from "./types.ts";
import { isValidId } from "./ids.ts";
import type { StorePaths } from "./paths.ts";

/** The stable part of a row, as stored in rows/<id>/meta.json. */
export interface RowMeta
	extends Pick<
		BoardRow,
		| "id"
		| "name"
		| "cwd"
		| "repo"
		| "sessionFile"
		| "createdAt"
		| "updatedAt"
		| "pinned"
		| "archived"
		| "model"
		| "thinking"
		| "worktreeMode"
		| "worktreePath"
		| "branch"
		| "ponytailMode"
		| "lastViewedAt"
		| "attempt"
		| "merged"
	> {
	version: 1;
	/** Where the worker runs: cwd, or the matching directory inside the worktree. */
	runCwd: string;
	baseCommit?: string;
	currentRunId: string;
}

export interface ProcessRecord {
	pid: number;
	start?: string;
}

interface CacheEntry {
	key: string;
	value: unknown;
}

/** Parsed-file cache keyed by mtime and size: an unchanged store is re-read with stats only. */
export class FileCache {
	private entries = new Map<string, CacheEntry>();
	/** Stat key of the latest read attempt per path, parsed or not: pollers hash it instead of stat-ing again. */
	private statKeys = new Map<string, string>();

	read(path: string, name: string): unknown {
		let stat;
		try {
			stat = statSync(path);
		} catch (error) {
			this.statKeys.delete(path);
			throw error;
		}
		const key = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
		this.statKeys.set(path, key);
		const hit = this.entries.get(path);
		if (hit && hit.key === key) return hit.value;
		const value = parseJsonStrict(readFileSync(path, "utf8"), name);
		this.entries.set(path, { key, value });
		return value;
	}

	keyOf(path: string): string {
		return this.statKeys.get(path) ?? "absent";
	}

	forget(path: string): void {
		this.entries.delete(path);
	}
}

export function listRowIds(paths: StorePaths): string[] {
	try {
		return readdirSync(paths.rows).filter((name) => isValidId(name)).sort();
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
		throw error;
	}
}

export function writeMeta(paths: StorePaths, meta: RowMeta): void {
	writeJsonAtomic(paths.meta(meta.id), meta);
}

function reasonOf(error: unknown, file: string): string {
	if ((error as NodeJS.ErrnoException).code === "ENOENT") return `${file}: missing`;
	return error instanceof Error ? error.message : String(error);
}

export function readMeta(paths: StorePaths, id: string, cache: FileCache): RowMeta {
	const value = cache.read(paths.meta(id), "meta.json");
	const meta = value as Partial<RowMeta> | null;
	if (!meta || typeof meta !== "object" || meta.id !== id || typeof meta.cwd !== "string" || typeof meta.currentRunId !== "string" || !isValidId(meta.currentRunId)) {
		throw new Error("meta.json: missing required fields (id, cwd, currentRunId)");
	}
	return meta as RowMeta;
}

export function readStatus(runDir: string, cache: FileCache): RunStatus {
	const value = cache.read(join(runDir, "status.json"), "status.json");
	const status = value as Partial<RunStatus> | null;
	if (!status || typeof status !== "object" || typeof status.state !== "string" || !Array.isArray(status.recentEvents)) {
		throw new Error("status.json: missing required fields (state, recentEvents)");
	}
	return status as RunStatus;
}

export function readProcess(path: string): ProcessRecord | undefined {
	try {
		const value = JSON.parse(readFileSync(path, "utf8")) as Partial<ProcessRecord>;
		return typeof value.pid === "number" ? { pid: value.pid, start: value.start } : undefined;
	} catch {
		return undefined;
	}
}

export function processAlive(record: ProcessRecord | undefined): boolean {
	return !!record && isAlive(record.pid, record.start);
}

/** A row whose files cannot be read: shown with state "error" and the reason; files stay put. */
export function errorRow(paths: StorePaths, id: string, reason: string, meta?: RowMeta): BoardRow {
	const now = Date.now();
	return {
		id,
		name: meta?.name ?? id,
		cwd: meta?.cwd ?? "",
		repo: meta?.repo,
		sessionFile: meta?.sessionFile ?? paths.session(id),
		createdAt: meta?.createdAt ?? 0,
		updatedAt: meta?.updatedAt ?? now,
		pinned: meta?.pinned ?? false,
		archived: meta?.archived ?? false,
		worktreeMode: meta?.worktreeMode ?? "none",
		worktreePath: meta?.worktreePath,
		branch: meta?.branch,
		state: "error",
		alive: false,
		summary: `Error: ${reason}`,
		error: reason,
		currentRunId: meta?.currentRunId,
		lastActivityAt: meta?.updatedAt ?? 0,
		lastViewedAt: meta?.lastViewedAt,
		recentEvents: [],
	};
}

export function rowFrom(meta: RowMeta, status: RunStatus, alive: boolean): BoardRow {
	return {
		id: meta.id,
		name: meta.name,
		cwd: meta.cwd,
		repo: meta.repo,
		sessionFile: meta.sessionFile,
		createdAt: meta.createdAt,
		updatedAt: Math.max(meta.updatedAt, status.updatedAt),
		pinned: meta.pinned,
		archived: meta.archived,
		model: meta.model,
		thinking: meta.thinking,
		worktreeMode: meta.worktreeMode,
		worktreePath: meta.worktreePath,
		branch: meta.branch,
		ponytailMode: meta.ponytailMode,
		state: status.state,
		alive,
		summary: status.summary,
		question: status.state === "needs_input" ? status.question : undefined,
		questionOptions: status.state === "needs_input" ? status.questionOptions : undefined,
		latestAssistant: status.latestAssistant,
		currentTool: status.currentTool,
		error: status.error,
		usage: status.usage,
		currentRunId: meta.currentRunId,
		lastActivityAt: status.lastActivityAt,
		lastViewedAt: meta.lastViewedAt,
		recentEvents: status.recentEvents,
		startedAt: status.startedAt,
		endedAt: status.endedAt,
		exitCode: status.exitCode ?? undefined,
		stderrTail: status.stderrTail,
		runDir: undefined,
		attempt: meta.attempt,
		merged: meta.merged,
	};
}

export function errorReason(error: unknown, file: string): string {
	return reasonOf(error, file);
}
