/** Which unmerged worktree rows changed the same files (pure: the caller supplies each row's files). */
import type { BoardRow, FileOverlap } from "../types.ts";

export interface TouchedRow {
	id: string;
	repo: string;
	files: readonly string[];
	/** Its attempt set: attempts of one set are alternatives, not rivals, so they never overlap each other. */
	set?: string;
}

/**
 * Rows that take part in overlap detection: unmerged, not archived, with a worktree in a repo.
 * Merged rows are home already; what they changed is now the current branch, not a rival edit.
 */
export function overlapCandidates(rows: readonly BoardRow[]): BoardRow[] {
	return rows.filter((row) => row.worktreePath && row.repo && !row.merged && !row.archived && row.state !== "error");
}

/** For every row, the files it shares with rows of the same repo outside its attempt set, each naming those rows. */
export function computeOverlaps(rows: readonly TouchedRow[]): Map<string, FileOverlap[]> {
	const owners = new Map<string, TouchedRow[]>();
	for (const row of rows) {
		for (const file of new Set(row.files)) {
			const key = `${row.repo}\0${file}`;
			const list = owners.get(key) ?? [];
			list.push(row);
			owners.set(key, list);
		}
	}
	const result = new Map<string, FileOverlap[]>();
	for (const row of rows) {
		const overlaps: FileOverlap[] = [];
		for (const file of [...new Set(row.files)].sort()) {
			const rival = (other: TouchedRow) => other.id !== row.id && (row.set === undefined || other.set !== row.set);
			const others = (owners.get(`${row.repo}\0${file}`) ?? []).filter(rival).map((other) => other.id);
			if (others.length > 0) overlaps.push({ file, rows: others });
		}
		if (overlaps.length > 0) result.set(row.id, overlaps);
	}
	return result;
}

/** "a.ts (with r1, r2); b.ts (with r1)" for show and tool output. */
export function describeOverlaps(overlaps: readonly FileOverlap[]): string {
	return overlaps.map((o) => `${o.file} (with ${o.rows.join(", ")})`).join("; ");
}
