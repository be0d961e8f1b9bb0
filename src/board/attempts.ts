/**
 * Attempt sets, forks, compare and merge on top of the engine's single-row service. The engine
 * keeps one job (one row, one run); this module adds the set logic and hands every row start to
 * the engine's own dispatch.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { newId } from "./ids.ts";
import { mergeRow } from "./merge.ts";
import { computeOverlaps, overlapCandidates } from "./overlap.ts";
import type { RowMeta } from "./types.ts";
import type { BoardEngine } from "./service.ts";
import type { AttemptInfo, AttemptSetView, BoardRow, DispatchOptions } from "./types.ts";
import { repoRoot, snapshotTree, touchedFiles } from "./worktree.ts";

export const MAX_ATTEMPTS = 8;
/** What a fork runs when the caller gives no prompt: carry on from the copied conversation. */
export const DEFAULT_FORK_PROMPT = "Continue from where this conversation left off.";
const TOUCHED_TTL_MS = 3000;

export function checkCount(count: unknown): number {
	if (count === undefined) return 1;
	if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > MAX_ATTEMPTS) {
		throw new Error(`count must be a whole number from 1 to ${MAX_ATTEMPTS} (got ${JSON.stringify(count)})`);
	}
	return count;
}

/**
 * Writes `target` as a fork of the session file `source` with pi's own SessionManager (new session
 * id, parentSession header, every entry copied), re-homed to `cwd`. pi names its files itself, so
 * the fork is made in a scratch directory and moved to the row's fixed path.
 */
export function seedFork(source: string, target: string, cwd: string): void {
	const scratch = mkdtempSync(join(dirname(target), ".fork-"));
	try {
		const file = SessionManager.forkFrom(source, cwd, scratch).getSessionFile();
		if (!file || !existsSync(file)) throw new Error(`pi did not write a forked session for ${source}`);
		chmodSync(file, 0o600);
		renameSync(file, target);
	} finally {
		rmSync(scratch, { recursive: true, force: true });
	}
}

function hasCommits(repo: string): boolean {
	try {
		execFileSync("git", ["rev-parse", "--verify", "-q", "HEAD"], { cwd: repo, stdio: "ignore", timeout: 15_000 });
		return true;
	} catch {
		return false;
	}
}

/** The engine without the methods this module adds (dispatch and list it wraps). */
export type CoreEngine = Omit<BoardEngine, "dispatchAttempts" | "fork" | "compare" | "compareDiff" | "merge">;

export interface AttemptHooks {
	/** Meta change under the engine's row discipline (lock, temp + rename). */
	updateMeta(id: string, change: (meta: RowMeta) => void): void | Promise<void>;
	/** Runs `fn` holding the row lock (merge must not race a reply, resume or another merge). */
	withRowLock<T>(id: string, fn: () => Promise<T>): Promise<T>;
	/** Meta change for a caller that already holds the row lock. */
	changeMetaLocked(id: string, change: (meta: RowMeta) => void): void;
}

export function withAttempts(base: CoreEngine, hooks: AttemptHooks): BoardEngine {
	const touched = new Map<string, { at: number; key: string; files: string[] }>();

	function filesOf(row: BoardRow): string[] {
		if (!row.worktreePath) return [];
		const key = `${row.updatedAt}:${row.worktreePath}`;
		const hit = touched.get(row.id);
		if (hit && hit.key === key && Date.now() - hit.at < TOUCHED_TTL_MS) return hit.files;
		const files = touchedFiles(row.worktreePath, row.repo) ?? [];
		touched.set(row.id, { at: Date.now(), key, files });
		return files;
	}

	/** Adds `overlaps` to rows; git runs only for repos with two or more candidate rows. */
	function annotate(rows: BoardRow[]): BoardRow[] {
		const candidates = overlapCandidates(rows);
		const perRepo = new Map<string, number>();
		for (const row of candidates) perRepo.set(row.repo ?? "", (perRepo.get(row.repo ?? "") ?? 0) + 1);
		const shared = candidates.filter((row) => (perRepo.get(row.repo ?? "") ?? 0) > 1);
		if (shared.length === 0) return rows;
		const overlaps = computeOverlaps(shared.map((row) => ({ id: row.id, repo: row.repo ?? "", files: filesOf(row) })));
		return rows.map((row) => (overlaps.has(row.id) ? { ...row, overlaps: overlaps.get(row.id) } : row));
	}

	async function requireRow(id: string): Promise<BoardRow> {
		const row = await base.get(id);
		if (!row) throw new Error(`no such row: ${id}`);
		return row;
	}

	async function dispatchAttempts(options: DispatchOptions): Promise<BoardRow[]> {
		const count = checkCount(options.count);
		const source = options.forkFrom !== undefined ? await forkSource(options.forkFrom) : undefined;
		const isolate = count > 1 || source !== undefined || options.worktreeMode === "worktree";
		if (isolate) {
			if (typeof options.cwd !== "string" || !options.cwd || !existsSync(options.cwd)) throw new Error(`working directory does not exist: ${String(options.cwd)}`);
			const repo = repoRoot(resolve(options.cwd));
			const why = count > 1 ? "an attempt set (each attempt runs in its own worktree)" : source ? "a fork (it runs in a fresh worktree)" : "worktree mode";
			if (!repo) throw new Error(`${why} needs a git repository: ${options.cwd} is not inside one`);
			if (!hasCommits(repo)) throw new Error(`${why} needs a commit to branch from: repository ${repo} has no commits yet`);
		}
		if (count === 1 && !source) return [await base.dispatch({ ...options, count: undefined })];
		const setId = newId("set-");
		const baseName = options.name?.trim() || (typeof options.prompt === "string" ? options.prompt.replace(/\s+/g, " ").trim().slice(0, 56) : "");
		const rows: BoardRow[] = [];
		for (let index = 1; index <= count; index++) {
			const name = source ? `${source.name.slice(0, 48)} fork ${index}/${count}` : `${baseName} [${index}/${count}]`;
			const row = await base.dispatch({ ...options, name, count: undefined, worktreeMode: "worktree" });
			const attempt: AttemptInfo = { setId, index, count, ...(source ? { forkOf: source.id } : {}) };
			await hooks.updateMeta(row.id, (meta) => (meta.attempt = attempt));
			rows.push({ ...row, attempt });
		}
		return rows;
	}

	async function forkSource(id: string): Promise<BoardRow> {
		const row = await requireRow(id);
		if (row.state === "queued" || row.state === "working") throw new Error(`row ${id} is still ${row.state}; fork it once it has finished or stopped`);
		let size = 0;
		try {
			size = statSync(row.sessionFile).size;
		} catch {
			throw new Error(`row ${id} has no session file to fork (${row.sessionFile})`);
		}
		if (size === 0) throw new Error(`row ${id}'s session file is empty; there is no conversation to fork`);
		return row;
	}

	async function list(options?: { includeArchived?: boolean }): Promise<BoardRow[]> {
		return annotate(await base.list(options));
	}

	return {
		...base,
		list,
		dispatchAttempts,
		async dispatch(options) {
			const rows = await dispatchAttempts(options);
			const first = rows[0];
			if (!first) throw new Error("dispatch started no row");
			return first;
		},
		async fork(id, options) {
			const source = await requireRow(id);
			return dispatchAttempts({
				prompt: options?.prompt ?? DEFAULT_FORK_PROMPT,
				cwd: source.cwd,
				model: source.model,
				thinking: source.thinking,
				ponytailMode: source.ponytailMode,
				count: options?.count ?? 1,
				forkFrom: id,
			});
		},
		async compare(id): Promise<AttemptSetView> {
			const rows = await list({ includeArchived: true });
			const row = rows.find((candidate) => candidate.id === id);
			if (!row) throw new Error(`no such row: ${id}`);
			const members = row.attempt ? rows.filter((r) => r.attempt?.setId === row.attempt?.setId).sort((a, b) => (a.attempt?.index ?? 0) - (b.attempt?.index ?? 0)) : [row];
			return {
				setId: row.attempt?.setId,
				repo: row.repo,
				rows: members.map((member) => ({ row: member, files: filesOf(member), overlaps: member.overlaps ?? [] })),
			};
		},
		async compareDiff(a, b) {
			const [left, right] = [await requireRow(a), await requireRow(b)];
			for (const row of [left, right]) {
				if (!row.worktreePath || !existsSync(row.worktreePath)) throw new Error(`row ${row.id} has no worktree to compare`);
			}
			if (left.repo !== right.repo || !left.repo) throw new Error(`rows ${a} and ${b} are not in the same repository`);
			const trees = [snapshotTree(left.worktreePath ?? ""), snapshotTree(right.worktreePath ?? "")];
			const out = execFileSync("git", ["diff", "--no-color", "--no-ext-diff", trees[0] ?? "", trees[1] ?? "", "--"], {
				cwd: left.repo,
				encoding: "utf8",
				maxBuffer: 64 * 1024 * 1024,
				timeout: 60_000,
			});
			const lines = out.split("\n");
			if (lines[lines.length - 1] === "") lines.pop();
			return lines.length > 0 ? lines : ["(the two attempts have identical files)"];
		},
		async merge(id, options) {
			return hooks.withRowLock(id, async () => {
				const row = await requireRow(id);
				return mergeRow(row, options ?? {}, { recordMerged: (info) => hooks.changeMetaLocked(id, (meta) => (meta.merged = info)) });
			});
		},
	};
}
