/**
 * Attempt sets seen together: which files each worktree row touched, which rows overlap, compare
 * and the diff between two attempts, and merging a finished row. Dispatching a set lives in
 * dispatch.ts; this module only reads rows and, for a merge, records it in meta.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mergeRow } from "./git/merge.ts";
import { inert, sanitizeText } from "./sanitize.ts";
import { computeOverlaps, overlapCandidates } from "./git/overlap.ts";
import type { AttemptSetView, BoardRow, MergeOptions, MergeResult, RowMeta } from "./types.ts";
import { touchedCache } from "./touched-cache.ts";
import { snapshotTree, touchedFiles } from "./git/worktree.ts";

// The set rules live with the other dispatch checks; the dashboard takes them from here.
export { checkCount, MAX_ATTEMPTS } from "./dispatch-checks.ts";

export interface AttemptDeps {
	list(options?: { includeArchived?: boolean }): Promise<BoardRow[]>;
	get(id: string): Promise<BoardRow | undefined>;
	/** Runs `fn` holding the row lock (merge must not race a reply, resume or another merge). */
	withRowLock<T>(id: string, fn: () => Promise<T>): Promise<T>;
	/** Changes meta, for a caller that holds the row lock. */
	changeMeta(id: string, change: (meta: RowMeta) => void): void;
	/** Records (or drops) the intent a killed merge left, for a caller that holds the row lock. */
	settleMerge(id: string): void;
}

export interface AttemptViews {
	/** Adds `overlaps` to rows; git runs only for repos with two or more candidate rows. */
	annotate(rows: BoardRow[]): BoardRow[];
	compare(id: string): Promise<AttemptSetView>;
	compareDiff(a: string, b: string): Promise<string[]>;
	merge(id: string, options?: MergeOptions): Promise<MergeResult>;
}

export function attemptViews(deps: AttemptDeps): AttemptViews {
	// git only for rows whose worktree changed since their files were last computed (touched-cache.ts).
	const touched = touchedCache((row) => (row.worktreePath ? touchedFiles(row.worktreePath, row.repo) : undefined));

	function filesOf(row: BoardRow): string[] {
		return row.worktreePath ? touched(row) : [];
	}

	function annotate(rows: BoardRow[]): BoardRow[] {
		const candidates = overlapCandidates(rows);
		const perRepo = new Map<string, number>();
		for (const row of candidates) perRepo.set(row.repo ?? "", (perRepo.get(row.repo ?? "") ?? 0) + 1);
		const shared = candidates.filter((row) => (perRepo.get(row.repo ?? "") ?? 0) > 1);
		if (shared.length === 0) return rows;
		const overlaps = computeOverlaps(
			shared.map((row) => ({ id: row.id, repo: row.repo ?? "", files: filesOf(row), set: row.attempt?.setId })),
		);
		// Matched on the names as git gave them; handed out sanitised (agents name files).
		const shown = (row: BoardRow) =>
			overlaps.get(row.id)?.map((overlap) => ({ ...overlap, file: sanitizeText(overlap.file) }));
		return rows.map((row) => (overlaps.has(row.id) ? { ...row, overlaps: shown(row) } : row));
	}

	async function requireRow(id: string): Promise<BoardRow> {
		const row = await deps.get(id);
		if (!row) throw new Error(`no such row: ${inert(id)}`);
		return row;
	}

	return {
		annotate,
		async compare(id) {
			const rows = annotate(await deps.list({ includeArchived: true }));
			const row = rows.find((candidate) => candidate.id === id);
			if (!row) throw new Error(`no such row: ${inert(id)}`);
			const members = row.attempt
				? rows
						.filter((r) => r.attempt?.setId === row.attempt?.setId)
						.sort((a, b) => (a.attempt?.index ?? 0) - (b.attempt?.index ?? 0))
				: [row];
			return {
				setId: row.attempt?.setId,
				repo: row.repo,
				rows: members.map((member) => ({
					row: member,
					files: filesOf(member).map((file) => sanitizeText(file)),
					overlaps: member.overlaps ?? [],
				})),
			};
		},
		async compareDiff(a, b) {
			const [left, right] = [await requireRow(a), await requireRow(b)];
			for (const row of [left, right]) {
				if (!row.worktreePath || !existsSync(row.worktreePath))
					throw new Error(`row ${row.id} has no worktree to compare`);
			}
			if (left.repo !== right.repo || !left.repo)
				throw new Error(`rows ${a} and ${b} are not in the same repository`);
			const trees = [snapshotTree(left.worktreePath ?? ""), snapshotTree(right.worktreePath ?? "")];
			const out = execFileSync(
				"git",
				["diff", "--no-color", "--no-ext-diff", trees[0] ?? "", trees[1] ?? "", "--"],
				{
					cwd: left.repo,
					encoding: "utf8",
					maxBuffer: 64 * 1024 * 1024,
					timeout: 60_000,
				},
			);
			const lines = out.split("\n");
			if (lines[lines.length - 1] === "") lines.pop();
			// Agent-made names and contents: no escape, control, bidi or line-separator character leaves here
			// (tabs become spaces, a U+2028 inside a line a space), for every consumer, the model's tool included.
			return lines.length > 0
				? lines.map((line) => sanitizeText(line, { multiline: true }).replace(/\n/g, " "))
				: ["(the two attempts have identical files)"];
		},
		async merge(id, options) {
			return deps.withRowLock(id, async () => {
				deps.settleMerge(id);
				const row = await requireRow(id);
				return mergeRow(row, options ?? {}, {
					recordIntent: (intent) => deps.changeMeta(id, (meta) => (meta.merging = intent)),
					clearIntent: () => deps.changeMeta(id, (meta) => delete meta.merging),
					recordMerged: (info) =>
						deps.changeMeta(id, (meta) => {
							meta.merged = info;
							delete meta.merging;
						}),
				});
			});
		},
	};
}
