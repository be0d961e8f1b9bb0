/**
 * Diff of a worktree row against its branch point (merge-base with the branch it was cut from),
 * uncommitted changes and new files included, and the files it touched. Spawned without a shell.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import type { BoardRow } from "../engine/types.ts";
import { notOver } from "../../../runner/life/phase.mjs";

/** New files shown with their content; past these, only their names. */
const NEW_FILES_SHOWN = 20;
const NEW_FILE_BYTES = 64 * 1024;

function git(cwd: string, args: string[], okCodes: readonly number[] = [0]): Promise<string> {
	return new Promise((resolve, reject) => {
		execFile("git", args, { cwd, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
			const code = error && typeof error.code === "number" ? error.code : error ? -1 : 0;
			if (okCodes.includes(code)) resolve(stdout);
			else reject(new Error(stderr.trim() || (error?.message ?? `git exit ${code}`)));
		});
	});
}

function lines(text: string): string[] {
	const out = text.split("\n");
	if (out[out.length - 1] === "") out.pop();
	return out;
}

async function untrackedFiles(dir: string): Promise<string[]> {
	return lines(await git(dir, ["ls-files", "--others", "--exclude-standard"]));
}

/** A new file as git shows it: `diff --git`, `new file mode`, then its lines added (exit 1 means "differs"). */
async function newFileDiff(dir: string, file: string): Promise<string[]> {
	const out = lines(await git(dir, ["diff", "--no-color", "--no-index", "--", "/dev/null", file], [0, 1]));
	const size = out.reduce((sum, line) => sum + line.length + 1, 0);
	return size > NEW_FILE_BYTES ? [...out.slice(0, 6), `new untracked file: ${file} (too large to show)`] : out;
}

export async function readRowDiff(row: BoardRow): Promise<string[]> {
	const dir = row.worktreePath;
	if (!dir) return ["(not a worktree row: no diff)"];
	// Its run makes it when it starts (runner/life/row-worktree.mjs): a row stopped in the queue never had one.
	if (!existsSync(dir))
		return [
			notOver(row) ? "(no worktree yet: its run makes it when it starts)" : `(no worktree: ${dir} is not there)`,
		];
	try {
		// The worktree's branch starts at the main checkout's HEAD; their merge-base is the branch point.
		const base = await branchPoint(dir, row);
		const out = lines(await git(dir, ["diff", "--no-color", base]));
		const untracked = await untrackedFiles(dir);
		for (const file of untracked.slice(0, NEW_FILES_SHOWN)) out.push(...(await newFileDiff(dir, file)));
		for (const file of untracked.slice(NEW_FILES_SHOWN)) out.push(`new untracked file: ${file}`);
		return out.length > 0 ? out : ["(no changes)"];
	} catch (error) {
		return [`diff failed: ${error instanceof Error ? error.message : String(error)}`];
	}
}

/** Files the row changed since its branch point, committed or not, new files included. */
export async function touchedFiles(dir: string, base: string): Promise<string[]> {
	const [tracked, untracked] = await Promise.all([
		git(dir, ["diff", "--name-only", "--no-renames", base]),
		untrackedFiles(dir),
	]);
	return [...new Set([...lines(tracked), ...untracked])].sort();
}

export async function branchPoint(dir: string, row: BoardRow): Promise<string> {
	const candidates = row.repo
		? [
				await git(row.repo, ["rev-parse", "HEAD"]).then(
					(s) => s.trim(),
					() => "",
				),
			]
		: [];
	for (const other of candidates) {
		if (!other) continue;
		const base = await git(dir, ["merge-base", "HEAD", other]).then(
			(s) => s.trim(),
			() => "",
		);
		if (base) return base;
	}
	return "HEAD";
}

/**
 * git's unified diff in the numbered form pi's `renderDiff` colours ("+12 text", "-12 text",
 * " 12 text"): hunk headers set the line numbers; file headers, and any line that is not part of a
 * hunk (a trailer, a note), pass through as they are.
 */
export function toNumberedDiff(input: readonly string[]): string[] {
	const out: string[] = [];
	let oldLine = 0;
	let newLine = 0;
	let inHunk = false;
	for (const line of input) {
		const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
		if (hunk) {
			oldLine = Number(hunk[1]);
			newLine = Number(hunk[2]);
			inHunk = true;
			out.push(line);
			continue;
		}
		// Inside a hunk every line starts with " ", "+", "-" or "\"; anything else ends it.
		if (inHunk && !/^[ +\-\\]/.test(line)) inHunk = false;
		if (!inHunk || line.startsWith("\\")) {
			out.push(line);
			continue;
		}
		if (line.startsWith("+")) out.push(`+${newLine++} ${line.slice(1)}`);
		else if (line.startsWith("-")) out.push(`-${oldLine++} ${line.slice(1)}`);
		else {
			out.push(` ${newLine} ${line.slice(1)}`);
			oldLine++;
			newLine++;
		}
	}
	return out;
}
