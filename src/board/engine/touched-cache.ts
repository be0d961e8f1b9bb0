/**
 * The files a finished worktree row touched, kept with the key they were computed for, so a list runs
 * git only for rows whose worktree changed since (4 git processes a row otherwise, on every list). The
 * key is read without git: the run and its end, the worktree's HEAD, index and top directory, its
 * branch's ref, and the main checkout's HEAD and ref (the merge-base moves with them). A row whose run
 * is live has no key (its agent may write at any moment) and is computed each time, as before. The
 * files persist in rows/<id>/touched.json, written under the row lock (skipped when someone holds it),
 * so the next pi process's first list reuses them; a file of the wrong shape is recomputed.
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { parseJsonStrict, writeJsonAtomic } from "../../../runner/store/fs-util.mjs";
import { tryLockRow } from "../../../runner/store/row-lock.mjs";
import { lstatStoreFile, readFileNoFollow } from "./store-guard.ts";
import type { BoardRow } from "./types.ts";
import { notOver } from "../../../runner/life/phase.mjs";

const FILE = "touched.json";

function statKey(path: string): string {
	try {
		const stat = statSync(path);
		return `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
	} catch {
		return "-";
	}
}

/** The git dir of a checkout (a worktree's .git is a "gitdir: <path>" file) and its common dir. */
function gitDirs(checkout: string): { gitDir: string; common: string } {
	const dotGit = join(checkout, ".git");
	let gitDir = dotGit;
	if (statSync(dotGit).isFile()) {
		const line = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, "utf8"))?.[1]?.trim();
		if (!line) throw new Error(`${dotGit}: no gitdir line`);
		gitDir = isAbsolute(line) ? line : resolve(checkout, line);
	}
	let common = gitDir;
	try {
		common = resolve(gitDir, readFileSync(join(gitDir, "commondir"), "utf8").trim());
	} catch {
		// A main checkout: its git dir is the common dir.
	}
	return { gitDir, common };
}

/** HEAD's text and the stat key of the ref it names (loose, or packed-refs). */
function headKey(checkout: string, withIndex: boolean): string {
	const { gitDir, common } = gitDirs(checkout);
	const head = readFileSync(join(gitDir, "HEAD"), "utf8").trim();
	const ref = /^ref: (.+)$/.exec(head)?.[1];
	const parts = [head, ref ? statKey(join(common, ref)) : "", statKey(join(common, "packed-refs"))];
	if (withIndex) parts.push(statKey(join(gitDir, "index")), statKey(checkout));
	return parts.join(",");
}

/** The key a finished worktree row's touched files were computed for; undefined: no caching (live, unreadable). */
export function touchedKey(row: BoardRow): string | undefined {
	if (!row.worktreePath || notOver(row) || row.endedAt === undefined) return undefined;
	try {
		const repo = row.repo ? headKey(row.repo, false) : "";
		return [row.currentRunId ?? "", row.endedAt, headKey(row.worktreePath, true), repo].join("|");
	} catch {
		return undefined;
	}
}

function rowDirOf(row: BoardRow): string | undefined {
	// runDir is <row>/runs/<runId>, derived from the ids by the store, never read from a file.
	return row.runDir ? dirname(dirname(row.runDir)) : undefined;
}

function readPersisted(rowDir: string, key: string): string[] | undefined {
	try {
		const path = join(rowDir, FILE);
		lstatStoreFile(path, FILE);
		const value = parseJsonStrict(readFileNoFollow(path, FILE), FILE) as { key?: unknown; files?: unknown };
		if (value.key !== key || !Array.isArray(value.files) || !value.files.every((file) => typeof file === "string"))
			return undefined;
		return value.files as string[];
	} catch {
		return undefined;
	}
}

function persist(rowDir: string, key: string, files: string[]): void {
	const release = tryLockRow(rowDir);
	if (!release) return;
	try {
		writeJsonAtomic(join(rowDir, FILE), { key, files });
	} catch {
		// A full or read-only store: computed again next time.
	} finally {
		release();
	}
}

/** A live row's files are reused this long (one list, compare and annotate in a row share them). */
const LIVE_TTL_MS = 3000;

/**
 * Touched files through the cache: memory, then rows/<id>/touched.json, then `compute` (git; undefined
 * when git failed, which is not kept).
 */
export function touchedCache(compute: (row: BoardRow) => string[] | undefined): (row: BoardRow) => string[] {
	const memory = new Map<string, { key: string; at: number; files: string[] }>();
	return (row) => {
		const key = touchedKey(row);
		const hit = memory.get(row.id);
		if (key === undefined) {
			const liveKey = `live:${row.updatedAt}:${row.worktreePath}`;
			if (hit?.key === liveKey && Date.now() - hit.at < LIVE_TTL_MS) return hit.files;
			const files = compute(row) ?? [];
			memory.set(row.id, { key: liveKey, at: Date.now(), files });
			return files;
		}
		if (hit?.key === key) return hit.files;
		const rowDir = rowDirOf(row);
		let files = rowDir ? readPersisted(rowDir, key) : undefined;
		if (!files) {
			files = compute(row);
			if (!files) return [];
			if (rowDir) persist(rowDir, key, files);
		}
		memory.set(row.id, { key, at: Date.now(), files });
		return files;
	};
}
