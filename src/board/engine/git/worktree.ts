/** Git helpers for rows: repo detection, per-row worktrees on branch agent-board/<id>, diff stats. */
import { execFile, execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { open, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, sep } from "node:path";
import type { DiffStats } from "../types.ts";

export function git(cwd: string, args: string[]): string {
	return execFileSync("git", args, {
		cwd,
		encoding: "utf8",
		stdio: ["ignore", "pipe", "pipe"],
		timeout: 15_000,
	}).trim();
}

/** Output as git wrote it, for -z lists. */
function gitRaw(cwd: string, args: string[]): string {
	return execFileSync("git", args, {
		cwd,
		encoding: "utf8",
		stdio: ["ignore", "pipe", "pipe"],
		timeout: 15_000,
		maxBuffer: 64 * 1024 * 1024,
	});
}

/**
 * Repository roots git found, by cwd, for this process: a dispatch asks for its cwd's root on every call
 * and `git rev-parse` was half of a dispatch's cost (docs/engine.md, "A dispatch that returns at once").
 * Only a found root is remembered, never "not a repository" (a directory may become one at any time).
 */
const knownRoots = new Map<string, string>();
const KNOWN_ROOTS_MAX = 256;

/** The top of the git work tree holding `cwd` (an absolute path), or undefined outside one. */
export function repoRoot(cwd: string): string | undefined {
	const known = knownRoots.get(cwd);
	if (known !== undefined && stillRoot(cwd, known)) return known;
	knownRoots.delete(cwd);
	let root: string | undefined;
	try {
		root = git(cwd, ["rev-parse", "--show-toplevel"]) || undefined;
	} catch {
		return undefined;
	}
	if (root && stillRoot(cwd, root)) {
		if (knownRoots.size >= KNOWN_ROOTS_MAX) knownRoots.clear();
		knownRoots.set(cwd, root);
	}
	return root;
}

/**
 * Whether git would still name `root` for `cwd`, by a few stats instead of a process: `cwd` still lies
 * under `root`, `root/.git` is still there, and no directory between them has a `.git` of its own now (a
 * repository made inside the old one). A cwd git's answer does not lie under (a symlink git resolved
 * differently) is never remembered.
 */
function stillRoot(cwd: string, root: string): boolean {
	let real: string;
	try {
		real = realpathSync(cwd);
	} catch {
		return false;
	}
	if (real !== root && !real.startsWith(root.endsWith(sep) ? root : root + sep)) return false;
	if (!existsSync(join(root, ".git"))) return false;
	for (let dir = real; dir !== root && dir !== dirname(dir); dir = dirname(dir))
		if (existsSync(join(dir, ".git"))) return false;
	return true;
}

export function removeWorktreeDir(repo: string, path: string, force: boolean): void {
	if (!existsSync(path)) return;
	const dirty = git(path, ["status", "--porcelain"]);
	if (dirty && !force) throw new Error(`worktree ${path} has uncommitted changes; pass force to remove it anyway`);
	git(repo, ["worktree", "remove", ...(force ? ["--force"] : []), path]);
}

/**
 * Files a worktree changed, committed or not, untracked included, against its merge-base with the
 * main checkout's HEAD: after the row merged the current branch in, only its own changes count.
 */
export function touchedFiles(path: string, repo: string | undefined): string[] | undefined {
	if (!existsSync(path)) return undefined;
	try {
		let base = "HEAD";
		try {
			if (repo) base = git(path, ["merge-base", "HEAD", git(repo, ["rev-parse", "HEAD"])]) || "HEAD";
		} catch {
			// Unrelated histories or a main checkout without commits: changes since the row's HEAD.
		}
		// -z: names whole and unquoted (a leading space, a newline, non-ASCII), never trimmed.
		const tracked = gitRaw(path, ["diff", "--name-only", "--no-renames", "-z", base]).split("\0");
		const untracked = gitRaw(path, ["ls-files", "--others", "--exclude-standard", "-z"]).split("\0");
		return [...new Set([...tracked, ...untracked].filter(Boolean))].sort();
	} catch {
		return undefined;
	}
}

/**
 * Tree object of a worktree's current files, uncommitted and untracked ones included, built in a
 * throwaway copy of its index so the worktree, its index and its branch stay exactly as they were.
 */
export function snapshotTree(path: string): string {
	const index = git(path, ["rev-parse", "--path-format=absolute", "--git-path", "index"]);
	const tmp = mkdtempSync(join(tmpdir(), "agent-board-index-"));
	const tmpIndex = join(tmp, "index");
	try {
		if (existsSync(index)) copyFileSync(index, tmpIndex);
		const env = { ...process.env, GIT_INDEX_FILE: tmpIndex };
		const run = (args: string[]) =>
			execFileSync("git", args, {
				cwd: path,
				env,
				encoding: "utf8",
				stdio: ["ignore", "pipe", "pipe"],
				timeout: 60_000,
			}).trim();
		run(["add", "-A", "."]);
		return run(["write-tree"]);
	} finally {
		rmSync(tmp, { recursive: true, force: true });
	}
}

/** git without holding the event loop (pi's UI draws on; a burst's worktrees are made one by one meanwhile). */
function gitAsync(cwd: string, args: string[]): Promise<string> {
	return new Promise((resolve, reject) => {
		// Untrimmed: a -z list may start with a name that starts with a space.
		execFile(
			"git",
			args,
			{ cwd, encoding: "utf8", timeout: 15_000, maxBuffer: 8 * 1024 * 1024 },
			(error, stdout, stderr) => (error ? reject(Object.assign(error, { stderr })) : resolve(stdout)),
		);
	});
}

/**
 * +/- lines and files changed in the worktree against its base commit (committed or not). Async git,
 * so it never blocks pi's UI; untracked files are counted from their first 256 KiB (200 files at most).
 */
export async function diffStats(path: string, baseCommit: string | undefined): Promise<DiffStats | undefined> {
	try {
		await stat(path);
		const [out, others] = await Promise.all([
			gitAsync(path, ["diff", "--numstat", baseCommit ?? "HEAD"]),
			gitAsync(path, ["ls-files", "--others", "--exclude-standard", "-z"]),
		]);
		const untracked = others.split("\0").filter(Boolean);
		const stats: DiffStats = { added: 0, removed: 0, files: untracked.length };
		for (const file of untracked.slice(0, 200)) stats.added += await countLinesAsync(join(path, file));
		for (const line of out.split("\n").filter(Boolean)) {
			const [added, removed] = line.split("\t");
			stats.files += 1;
			stats.added += Number(added) || 0;
			stats.removed += Number(removed) || 0;
		}
		return stats;
	} catch {
		return undefined;
	}
}

async function countLinesAsync(path: string): Promise<number> {
	try {
		const handle = await open(path, "r");
		try {
			const buffer = Buffer.alloc(256 * 1024);
			const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
			let lines = 0;
			for (let i = 0; i < bytesRead; i++) if (buffer[i] === 10) lines += 1;
			return bytesRead > 0 && buffer[bytesRead - 1] !== 10 ? lines + 1 : lines;
		} finally {
			await handle.close();
		}
	} catch {
		return 0;
	}
}
