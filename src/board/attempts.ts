/**
 * Attempt sets seen together: which files each worktree row touched, which rows overlap, compare
 * and the diff between two attempts, and merging a finished row. Dispatching a set lives in
 * dispatch.ts; this module only reads rows and, for a merge, records it in meta.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mergeRow } from "./merge.ts";
import { computeOverlaps, overlapCandidates } from "./overlap.ts";
import type { AttemptSetView, BoardRow, MergeOptions, MergeResult, MergedInfo } from "./types.ts";
import { snapshotTree, touchedFiles } from "./worktree.ts";

// The set rules live with the other dispatch checks; the dashboard takes them from here.
export { checkCount, MAX_ATTEMPTS } from "./dispatch-checks.ts";

const TOUCHED_TTL_MS = 3000;

export interface AttemptDeps {
	list(options?: { includeArchived?: boolean }): Promise<BoardRow[]>;
	get(id: string): Promise<BoardRow | undefined>;
	/** Runs `fn` holding the row lock (merge must not race a reply, resume or another merge). */
	withRowLock<T>(id: string, fn: () => Promise<T>): Promise<T>;
	/** Records the merge in meta, for a caller that holds the row lock. */
	recordMerged(id: string, info: MergedInfo): void;
}

export interface AttemptViews {
	/** Adds `overlaps` to rows; git runs only for repos with two or more candidate rows. */
	annotate(rows: BoardRow[]): BoardRow[];
	compare(id: string): Promise<AttemptSetView>;
	compareDiff(a: string, b: string): Promise<string[]>;
	merge(id: string, options?: MergeOptions): Promise<MergeResult>;
}

export function attemptViews(deps: AttemptDeps): AttemptViews {
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
		const row = await deps.get(id);
		if (!row) throw new Error(`no such row: ${id}`);
		return row;
	}

	return {
		annotate,
		async compare(id) {
			const rows = annotate(await deps.list({ includeArchived: true }));
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
			return deps.withRowLock(id, async () => {
				const row = await requireRow(id);
				return mergeRow(row, options ?? {}, { recordMerged: (info) => deps.recordMerged(id, info) });
			});
		},
	};
}
