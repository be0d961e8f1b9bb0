/**
 * Reading and writing the durable store. One directory per row (rows/<id>/meta.json) so concurrent
 * dispatchers never share a read-modify-write file; run state lives in rows/<id>/runs/<runId>/.
 */
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseJsonStrict, writeJsonAtomic } from "../../../runner/store/fs-util.mjs";
import { isAlive } from "../../../runner/store/proc.mjs";
import { runEnded } from "../../../runner/life/state-rules.mjs";
import type {
	AttemptInfo,
	BoardEvent,
	BoardRow,
	LiveView,
	ProcessRecord,
	Receipt,
	RowMeta,
	RunStatus,
	SlotOwner,
} from "./types.ts";
import { isValidId } from "./ids.ts";
import type { StorePaths } from "./paths.ts";
import { sanitizeOptional, sanitizeText } from "./sanitize.ts";
import {
	checkShape,
	EventLineSchema,
	MetaSchema,
	ProcessRecordSchema,
	ReceiptSchema,
	SlotOwnerSchema,
	StatusSchema,
} from "./schemas.ts";
import { assertRealDir, describeFsError, fsErrorMessage, lstatStoreFile, readFileNoFollow } from "./store-guard.ts";

export type { ProcessRecord, RowMeta, SlotOwner };

interface CacheEntry {
	key: string;
	value: unknown;
	/** The value kept is a slim copy (retain): a full read parses the file again. */
	slim: boolean;
}

export interface CacheReadOptions<T> {
	/** A slim copy to keep instead of the value (undefined: keep it whole). */
	retain?: (value: T) => T | undefined;
	/** The caller needs the whole value: a slim entry does not do. */
	full?: boolean;
}

/** Parsed-file cache keyed by mtime and size: an unchanged store is re-read with stats only. */
export class FileCache {
	private entries = new Map<string, CacheEntry>();
	/** Stat key of the latest read attempt per path, parsed or not: pollers hash it instead of stat-ing again. */
	private statKeys = new Map<string, string>();

	/**
	 * Parsed and shape-checked content of a store file. Never follows a symlink (lstat, then
	 * O_NOFOLLOW); `check` runs once per change of the file, so an unchanged store costs one lstat.
	 */
	read<T>(
		path: string,
		name: string,
		check: (value: unknown) => T,
		verifyDirs?: () => void,
		options: CacheReadOptions<T> = {},
	): T {
		let stat: ReturnType<typeof lstatStoreFile>;
		try {
			stat = lstatStoreFile(path, name);
		} catch (error) {
			this.statKeys.delete(path);
			throw error;
		}
		const key = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
		this.statKeys.set(path, key);
		const hit = this.entries.get(path);
		if (hit && hit.key === key && !(hit.slim && options.full)) return hit.value as T;
		// Parent directories are checked when the content is (re)read: a hit returns bytes that were
		// read through verified directories, whatever was swapped in since.
		verifyDirs?.();
		const value = check(parseJsonStrict(readFileNoFollow(path, name), name));
		// A full read of a slim entry leaves the slim copy: the whole value is for this caller only.
		if (hit && hit.key === key) return value;
		const slim = options.retain?.(value);
		this.entries.set(path, { key, value: slim ?? value, slim: slim !== undefined });
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
		return readdirSync(paths.rows)
			.filter((name) => isValidId(name))
			.sort();
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
		throw describeFsError(error, paths.rows, "cannot read");
	}
}

/** Errors name the file and errno ("cannot write <path>: ENOSPC (no space left on device)"). */
export function writeMeta(paths: StorePaths, meta: RowMeta): void {
	try {
		writeJsonAtomic(paths.meta(meta.id), meta);
	} catch (error) {
		throw describeFsError(error, paths.meta(meta.id), "cannot write");
	}
}

function reasonOf(error: unknown, file: string): string {
	const code = (error as NodeJS.ErrnoException).code;
	if (code === "ENOENT")
		return error instanceof Error && error.message.startsWith(file) ? error.message : `${file}: missing`;
	// fs errors name the errno and the path: "meta.json: cannot read /store/rows/x/meta.json: EACCES (permission denied)".
	const path = (error as NodeJS.ErrnoException).path;
	if (code && path) return `${file}: ${fsErrorMessage(error, path, "cannot read")}`;
	return error instanceof Error ? error.message : String(error);
}

/**
 * rows/<id>/meta.json, shape-checked. The row directory is lstat-checked on every call, cache hit or
 * not: callers write meta.json next to what they read, and that write must not go through a symlink.
 */
export function readMeta(paths: StorePaths, id: string, cache: FileCache): RowMeta {
	assertRealDir(paths.row(id), "row directory");
	return cache.read(paths.meta(id), "meta.json", (value) => {
		const meta = checkShape(MetaSchema, value, "meta.json");
		if (meta.id !== id) throw new Error(`meta.json: /id is ${JSON.stringify(meta.id)}, not its directory name`);
		if (!isValidId(meta.currentRunId)) throw new Error("meta.json: /currentRunId is not a valid id");
		// The session file is where the ids say, whatever the file claims: a path in a store file is never followed.
		return { ...meta, sessionFile: paths.session(id) };
	});
}

/** Characters of an ended run's answer the cache keeps (more than a list line shows). */
const SLIM_ANSWER = 512;

/**
 * What the cache keeps of an ended run's status: what a list line shows, without the events, stderr
 * tail, receipts and the whole answer (a full read parses the file again). A live run's stays whole.
 */
function slimEndedStatus(status: RunStatus): RunStatus | undefined {
	if (!runEnded(status)) return undefined;
	const answer = status.latestAssistant;
	return {
		...status,
		recentEvents: [],
		stderrTail: undefined,
		receipts: undefined,
		latestAssistant: answer && answer.length > SLIM_ANSWER ? answer.slice(0, SLIM_ANSWER) : answer,
	};
}

/**
 * runs/<runId>/status.json, shape-checked ("status.json: /state must be equal to one of ..."). `full`
 * false accepts the cache's slim copy of an ended run (a list line's fields only).
 */
export function readStatus(runDir: string, cache: FileCache, full = true): RunStatus {
	const verifyDirs = (): void => {
		assertRealDir(join(runDir, ".."), "runs directory");
		assertRealDir(runDir, "run directory");
	};
	return cache.read(
		join(runDir, "status.json"),
		"status.json",
		(value) => checkShape(StatusSchema, value, "status.json"),
		verifyDirs,
		{ retain: slimEndedStatus, full },
	);
}

/** Result of reading a process record: a missing file and an invalid one are different facts. */
export type ProcessRecordRead = { record: ProcessRecord } | { missing: true } | { invalid: string };

export function readProcessRecord(path: string): ProcessRecordRead {
	const name = path.slice(path.lastIndexOf("/") + 1);
	let text: string;
	try {
		lstatStoreFile(path, name);
		text = readFileNoFollow(path, name);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return { missing: true };
		return { invalid: reasonOf(error, name) };
	}
	try {
		return { record: checkShape(ProcessRecordSchema, parseJsonStrict(text, name), name) };
	} catch (error) {
		return { invalid: error instanceof Error ? error.message : String(error) };
	}
}

/**
 * A process record that can be trusted with a signal, or undefined (missing, unreadable, no start
 * time, pid < 2): an invalid record is never signalled.
 */
export function readProcess(path: string): ProcessRecord | undefined {
	const read = readProcessRecord(path);
	return "record" in read ? read.record : undefined;
}

/**
 * slots/slot-<n>.json. An empty or garbage file (a runner killed between create and write) is
 * "invalid", with the reason, never an owner: the caller decides when it is old enough to reclaim.
 */
export function readSlot(path: string): { owner: SlotOwner } | { missing: true } | { invalid: string } {
	const name = path.slice(path.lastIndexOf("/") + 1);
	try {
		lstatStoreFile(path, name);
		return { owner: checkShape(SlotOwnerSchema, parseJsonStrict(readFileNoFollow(path, name), name), name) };
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return { missing: true };
		return { invalid: reasonOf(error, name) };
	}
}

export function processAlive(record: ProcessRecord | undefined): boolean {
	return !!record && isAlive(record.pid, record.start);
}

const line = (text: string | undefined): string | undefined => sanitizeOptional(text);
const block = (text: string | undefined): string | undefined => sanitizeOptional(text, { multiline: true });

/** The row fields that come from meta.json, sanitised: a planted name or path is as untrusted as model text. */
function metaFields(meta: RowMeta) {
	return {
		name: sanitizeText(meta.name),
		cwd: sanitizeText(meta.cwd),
		repo: line(meta.repo),
		sessionFile: sanitizeText(meta.sessionFile),
		model: line(meta.model),
		worktreePath: line(meta.worktreePath),
		branch: line(meta.branch),
		ponytailMode: line(meta.ponytailMode),
		attempt: attemptFrom(meta.attempt),
		merged: meta.merged && {
			...meta.merged,
			commit: sanitizeText(meta.merged.commit),
			into: sanitizeText(meta.merged.into),
		},
		target: line(meta.target),
	};
}

function attemptFrom(attempt: AttemptInfo | undefined): AttemptInfo | undefined {
	if (!attempt) return undefined;
	const { forkOf, ...rest } = attempt;
	return {
		...rest,
		setId: sanitizeText(attempt.setId),
		...(forkOf === undefined ? {} : { forkOf: sanitizeText(forkOf) }),
	};
}

/** A live view's worker strings, sanitised (rowFrom's, and a row's newest words': row-words.ts). */
export function liveFrom(live: LiveView | undefined): LiveView | undefined {
	if (!live) return undefined;
	return {
		text: block(live.text),
		tool: live.tool && {
			name: sanitizeText(live.tool.name),
			detail: sanitizeText(live.tool.detail),
			startedAt: live.tool.startedAt,
		},
		waitingSince: live.waitingSince,
		retry: live.retry && { ...live.retry, reason: sanitizeText(live.retry.reason) },
		compactingSince: live.compactingSince,
	};
}

function receiptsFrom(receipts: Receipt[] | undefined): Receipt[] | undefined {
	return receipts?.map((receipt) => ({
		...receipt,
		reason: line(receipt.reason),
		preview: sanitizeText(receipt.preview),
	}));
}

function eventsFrom(events: BoardEvent[]): BoardEvent[] {
	return events.map((event) => ({ at: event.at, text: sanitizeText(event.text) }));
}

/** mtime of a path not followed through a symlink, or 0 when it cannot be read. */
function changedAt(path: string): number {
	try {
		return lstatSync(path).mtimeMs;
	} catch {
		return 0;
	}
}

/** A row whose files cannot be read: shown with state "error" and the reason; files stay put. */
export function errorRow(paths: StorePaths, id: string, reason: string, meta?: RowMeta): BoardRow {
	const now = Date.now();
	// Parse errors quote the file's bytes: the reason is as untrusted as the file.
	const safeReason = sanitizeText(reason);
	const fields = meta ? metaFields(meta) : undefined;
	// Without meta, the row directory's last change is the one time known; 0 means "unknown" (shown "?").
	const known = meta?.updatedAt ?? changedAt(paths.row(id));
	return {
		id,
		name: fields?.name ?? id,
		cwd: fields?.cwd ?? "",
		repo: fields?.repo,
		sessionFile: fields?.sessionFile ?? paths.session(id),
		createdAt: meta?.createdAt ?? known,
		updatedAt: meta?.updatedAt ?? now,
		pinned: meta?.pinned ?? false,
		archived: meta?.archived ?? false,
		worktreeMode: meta?.worktreeMode ?? "none",
		worktreePath: fields?.worktreePath,
		branch: fields?.branch,
		state: "error",
		alive: false,
		summary: `Error: ${safeReason}`,
		error: safeReason,
		currentRunId: meta?.currentRunId,
		lastActivityAt: known,
		lastViewedAt: meta?.lastViewedAt,
		recentEvents: [],
	};
}

/** Builds a row from checked files; every worker-supplied string is sanitised here, once, for every consumer. */
export function rowFrom(meta: RowMeta, status: RunStatus, alive: boolean): BoardRow {
	const asks = status.state === "needs_input";
	return {
		id: meta.id,
		...metaFields(meta),
		createdAt: meta.createdAt,
		updatedAt: Math.max(meta.updatedAt, status.updatedAt),
		pinned: meta.pinned,
		archived: meta.archived,
		thinking: meta.thinking,
		worktreeMode: meta.worktreeMode,
		state: status.state,
		alive,
		summary: sanitizeText(status.summary ?? ""),
		question: asks ? block(status.question) : undefined,
		questionOptions: asks ? status.questionOptions?.map((option) => sanitizeText(option)) : undefined,
		latestAssistant: block(status.latestAssistant),
		currentTool: line(status.currentTool),
		error: block(status.error),
		usage: status.usage,
		currentRunId: meta.currentRunId,
		lastActivityAt: status.lastActivityAt,
		lastViewedAt: meta.lastViewedAt,
		recentEvents: eventsFrom(status.recentEvents),
		startedAt: status.startedAt,
		endedAt: status.endedAt,
		exitCode: status.exitCode ?? undefined,
		stderrTail: block(status.stderrTail),
		runDir: undefined,
		// A finished run's last live view is history, not what the agent does now.
		live: runEnded(status) ? undefined : liveFrom(status.live),
		modelUsed: line(status.model),
		receipts: receiptsFrom(status.receipts),
		errorCode: status.errorCode,
		host: line(status.link?.target),
		...unreachableFrom(status),
		...budgetFrom(meta, status, asks),
	};
}

/** Spend against budget, the row's own limit, the supervisor's note on a waiting question, the preset. */
function budgetFrom(
	meta: RowMeta,
	status: RunStatus,
	asks: boolean,
): Pick<BoardRow, "budget" | "budgetLimit" | "supervisorNote" | "preset"> {
	const note = asks ? line(status.supervisor?.note) : undefined;
	const paused = status.budget?.paused === true && asks && !runEnded(status);
	return {
		...(status.budget ? { budget: { ...status.budget, paused: paused || undefined } } : {}),
		...(meta.budget ? { budgetLimit: meta.budget } : {}),
		...(note ? { supervisorNote: note } : {}),
		...(meta.preset ? { preset: sanitizeText(meta.preset) } : {}),
	};
}

/** A target run that cannot be reached says so in its summary too: every view shows it unchanged. */
function unreachableFrom(status: RunStatus): Pick<BoardRow, "unreachable" | "summary"> | undefined {
	const since = status.link?.unreachableSince;
	if (since === undefined || runEnded(status)) return undefined;
	const reason = line(status.link?.reason) ?? "no reason given";
	const stop = status.stopRequested ? "stop requested; " : "";
	return {
		unreachable: { since, reason },
		summary: `${stop}unreachable since ${new Date(since).toTimeString().slice(0, 8)}: ${reason}`,
	};
}

export function errorReason(error: unknown, file: string): string {
	return reasonOf(error, file);
}

/**
 * Compact worker events of a run (events.jsonl), oldest first, each line shape-checked. A torn last
 * line (the runner mid-append) is not an event yet; a wrong line anywhere else is an error naming the
 * file and the line, and the file is left as it is.
 */
export function readEventsFile(path: string): Record<string, unknown>[] {
	let text: string;
	try {
		lstatStoreFile(path, "events.jsonl");
		text = readFileNoFollow(path, "events.jsonl");
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
		throw new Error(`${path}: ${error instanceof Error ? error.message : String(error)}`);
	}
	const lines = text.split("\n");
	// The part after the last "\n" is a line still being written.
	lines.pop();
	return lines.map((line, index) => {
		const where = `${path}: line ${index + 1}`;
		let value: unknown;
		try {
			value = JSON.parse(line);
		} catch (error) {
			throw new Error(`${where}: invalid JSON (${error instanceof Error ? error.message : String(error)})`);
		}
		return checkShape(EventLineSchema, value, where) as Record<string, unknown>;
	});
}

/** runs/<runId>/receipts/<id>.json, shape-checked; undefined while the runner has not answered. */
export function readReceiptFile(path: string): Receipt | undefined {
	let text: string;
	try {
		lstatStoreFile(path, "receipt");
		text = readFileNoFollow(path, "receipt");
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
		throw new Error(`${path}: ${error instanceof Error ? error.message : String(error)}`);
	}
	return checkShape(ReceiptSchema, parseJsonStrict(text, path), path);
}
