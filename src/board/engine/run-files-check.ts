/**
 * A run's own files are what they should be: none is a symbolic link (to a file outside, say), a FIFO,
 * a device or a directory where a file belongs, in the run's directory or its inbox/, claimed/ and
 * receipts/. Reading never follows such a file anyway (store-guard.ts); this makes the row an error row
 * naming the file and why, instead of a row that reads "completed" with its events somewhere else.
 * One lstat per directory per read: the entries are listed again only when a directory changed.
 */
import { type Dirent, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

const SUBDIRS = ["inbox", "claimed", "receipts"];
/** Names that are files in a run's layout: one of them as a directory is wrong too. */
const FILE_NAME = /\.(json|jsonl|log)$/;

const checked = new Map<string, { key: string; problem: string | undefined }>();

function keyOf(dir: string): string {
	try {
		const stat = lstatSync(dir);
		return `${stat.mtimeMs}:${stat.ino}`;
	} catch {
		return "absent";
	}
}

function entries(dir: string): Dirent[] {
	try {
		return readdirSync(dir, { withFileTypes: true });
	} catch {
		return [];
	}
}

/** "events.jsonl: is a symbolic link (not followed)", or why another entry is wrong. @param where its place in the run */
function entryProblem(entry: Dirent, where: string, subdir: boolean): string | undefined {
	if (entry.isSymbolicLink()) return `${where}: is a symbolic link (not followed)`;
	if (entry.isDirectory())
		return subdir || FILE_NAME.test(entry.name) ? `${where}: a directory, not a file` : undefined;
	if (!entry.isFile()) return `${where}: not a regular file`;
	return undefined;
}

function problemIn(runDir: string): string | undefined {
	for (const entry of entries(runDir)) {
		if (SUBDIRS.includes(entry.name) && entry.isDirectory()) continue;
		const problem = entryProblem(entry, entry.name, false);
		if (problem) return problem;
	}
	for (const sub of SUBDIRS)
		for (const entry of entries(join(runDir, sub))) {
			const problem = entryProblem(entry, `${sub}/${entry.name}`, true);
			if (problem) return problem;
		}
	return undefined;
}

/** Why one of the run's files is not what it should be, or undefined. */
export function runFilesProblem(runDir: string): string | undefined {
	const key = [runDir, ...SUBDIRS.map((sub) => join(runDir, sub))].map(keyOf).join("|");
	const hit = checked.get(runDir);
	if (hit?.key === key) return hit.problem;
	const problem = problemIn(runDir);
	checked.set(runDir, { key, problem });
	return problem;
}
