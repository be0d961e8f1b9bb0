/**
 * Diff stats for worktree rows, off pi's UI thread: async git, cached on the worktree's own state
 * (HEAD, index mtime) plus the row's updatedAt, and recomputed at most once per `minIntervalMs` per row
 * whatever that key does, except once more right after the row's run ends, so final stats show at once.
 * The list asks only for the rows it shows; results arrive through `subscribe`. The same pass
 * records the files the row touched, for overlaps (view-model/overlap-index.ts).
 */
import { readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { BoardRow, DiffStats } from "../engine/types.ts";
import { diffStats } from "../engine/git/worktree.ts";
import { branchPoint, touchedFiles } from "./diff.ts";

interface Entry {
	key: string;
	at: number;
	value: DiffStats | undefined;
	files?: readonly string[];
	running: boolean;
	/** Branch point, found once per row. */
	base?: string;
	/** The row's updatedAt when this entry was last refreshed. */
	updatedAt?: number;
}

export type DiffReader = (path: string, base: string | undefined) => Promise<DiffStats | undefined>;
export type FilesReader = (path: string, base: string) => Promise<readonly string[] | undefined>;

/** HEAD + index mtime of a worktree: changes when the worker commits or stages. */
export async function worktreeStateKey(path: string): Promise<string> {
	let gitDir = join(path, ".git");
	try {
		const dotGit = await readFile(gitDir, "utf8");
		const match = /^gitdir:\s*(.+)$/m.exec(dotGit);
		if (match?.[1]) gitDir = resolve(path, match[1].trim());
	} catch {
		// A directory .git (or none): use it as is.
	}
	const [head, index] = await Promise.all([
		readFile(join(gitDir, "HEAD"), "utf8").catch(() => ""),
		stat(join(gitDir, "index")).then(
			(s) => String(s.mtimeMs),
			() => "",
		),
	]);
	return `${head.trim()}|${index}`;
}

export class DiffCache {
	private readonly entries = new Map<string, Entry>();
	/** Number of git diff computations started (for tests and the bench). */
	computed = 0;

	private readonly listeners = new Set<(id: string) => void>();
	private readonly read: DiffReader;
	private readonly readFiles: FilesReader;
	private readonly minIntervalMs: number;
	private readonly now: () => number;

	constructor(
		options: { read?: DiffReader; readFiles?: FilesReader; minIntervalMs?: number; now?: () => number } = {},
	) {
		this.read = options.read ?? diffStats;
		this.readFiles = options.readFiles ?? ((path, base) => touchedFiles(path, base).catch(() => undefined));
		this.minIntervalMs = options.minIntervalMs ?? 5000;
		this.now = options.now ?? Date.now;
	}

	subscribe(listener: (id: string) => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/** The last known stats without scheduling anything (for column widths over all rows). */
	peek(row: BoardRow): DiffStats | undefined {
		return this.entries.get(row.id)?.value ?? row.diff;
	}

	/** Files the row touched, as of its last refresh (undefined until one finished). */
	files(row: BoardRow): readonly string[] | undefined {
		return this.entries.get(row.id)?.files;
	}

	/** The last known stats (or the engine's, if it still computes them); schedules a refresh when due. */
	get(row: BoardRow): DiffStats | undefined {
		const path = row.worktreePath;
		if (!path) return undefined;
		const entry = this.entries.get(row.id);
		const due =
			entry &&
			!entry.running &&
			(this.now() - entry.at >= this.minIntervalMs || (!row.alive && entry.updatedAt !== row.updatedAt));
		if (!entry || due) void this.refresh(row, path, entry);
		return entry?.value ?? row.diff;
	}

	private async refresh(row: BoardRow, path: string, previous: Entry | undefined): Promise<void> {
		const entry: Entry = previous ?? { key: "", at: 0, value: undefined, running: false };
		entry.running = true;
		entry.at = this.now();
		entry.updatedAt = row.updatedAt;
		this.entries.set(row.id, entry);
		try {
			const key = `${await worktreeStateKey(path)}|${row.updatedAt}`;
			if (key === entry.key) return;
			this.computed += 1;
			entry.base ??= await branchPoint(path, row);
			const [value, files] = await Promise.all([this.read(path, entry.base), this.readFiles(path, entry.base)]);
			entry.key = key;
			const changed =
				JSON.stringify(value) !== JSON.stringify(entry.value) ||
				JSON.stringify(files) !== JSON.stringify(entry.files);
			entry.value = value;
			entry.files = files;
			if (changed) for (const listener of this.listeners) listener(row.id);
		} finally {
			entry.running = false;
			entry.at = this.now();
		}
	}
}
