/**
 * Diff of a worktree row against its branch point (merge-base with the branch it was cut from),
 * including uncommitted changes. Spawned without a shell.
 */
import { execFile } from "node:child_process";
import type { BoardRow } from "../types.ts";

function git(cwd: string, args: string[]): Promise<string> {
	return new Promise((resolve, reject) => {
		execFile("git", args, { cwd, maxBuffer: 32 * 1024 * 1024 }, (error, stdout, stderr) => {
			if (error) reject(new Error(stderr.trim() || error.message));
			else resolve(stdout);
		});
	});
}

export async function readRowDiff(row: BoardRow): Promise<string[]> {
	const dir = row.worktreePath;
	if (!dir) return ["(not a worktree row: no diff)"];
	try {
		// The worktree's branch starts at the main checkout's HEAD; its reflog root is the branch point.
		const base = await branchPoint(dir, row);
		const tracked = await git(dir, ["diff", "--no-color", base]);
		const untracked = (await git(dir, ["ls-files", "--others", "--exclude-standard"])).split("\n").filter(Boolean);
		const lines = tracked.split("\n");
		for (const file of untracked) lines.push(`new untracked file: ${file}`);
		const clean = lines.filter((line, i) => !(i === lines.length - 1 && line === ""));
		return clean.length > 0 ? clean : ["(no changes)"];
	} catch (error) {
		return [`diff failed: ${error instanceof Error ? error.message : String(error)}`];
	}
}

export async function branchPoint(dir: string, row: BoardRow): Promise<string> {
	const candidates = row.repo ? [await git(row.repo, ["rev-parse", "HEAD"]).then((s) => s.trim(), () => "")] : [];
	for (const other of candidates) {
		if (!other) continue;
		const base = await git(dir, ["merge-base", "HEAD", other]).then((s) => s.trim(), () => "");
		if (base) return base;
	}
	return "HEAD";
}

/**
 * git's unified diff in the numbered form pi's `renderDiff` colours ("+12 text", "-12 text",
 * " 12 text"): hunk headers set the line numbers, file headers stay as context lines.
 */
export function toNumberedDiff(lines: readonly string[]): string[] {
	const out: string[] = [];
	let oldLine = 0;
	let newLine = 0;
	let inHunk = false;
	for (const line of lines) {
		const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
		if (hunk) {
			oldLine = Number(hunk[1]);
			newLine = Number(hunk[2]);
			inHunk = true;
			out.push(line);
			continue;
		}
		if (line.startsWith("diff --git")) inHunk = false;
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
