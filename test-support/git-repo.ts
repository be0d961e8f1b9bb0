/** Temporary git repositories for attempt/merge tests, and a byte-level snapshot of a checkout. */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

export function git(cwd: string, ...args: string[]): string {
	return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/** A repository on branch main with a local identity; `files` make the first commit (none: no commits). */
export function initRepo(dir: string, files: Record<string, string> = {}): string {
	mkdirSync(dir, { recursive: true });
	git(dir, "init", "-q", "-b", "main");
	git(dir, "config", "user.name", "Test User");
	git(dir, "config", "user.email", "test@example.com");
	git(dir, "config", "commit.gpgsign", "false");
	if (Object.keys(files).length === 0) return dir;
	for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
	git(dir, "add", "-A");
	git(dir, "commit", "-q", "-m", "initial");
	return dir;
}

export interface CheckoutSnapshot {
	head: string;
	symbolic: string;
	index: string;
	mergeInProgress: boolean;
	files: Record<string, string>;
}

/** Every work-tree file (bytes as base64), HEAD, the branch, the staged entries and any merge state. */
export function snapshot(repo: string): CheckoutSnapshot {
	const files: Record<string, string> = {};
	const walk = (dir: string): void => {
		for (const name of readdirSync(dir)) {
			const path = join(dir, name);
			if (dir === repo && name === ".git") continue;
			if (statSync(path).isDirectory()) walk(path);
			else files[relative(repo, path)] = readFileSync(path).toString("base64");
		}
	};
	walk(repo);
	let symbolic = "";
	try {
		symbolic = git(repo, "symbolic-ref", "-q", "HEAD");
	} catch {
		symbolic = "(detached)";
	}
	let head = "";
	try {
		head = git(repo, "rev-parse", "HEAD");
	} catch {
		head = "(none)";
	}
	const gitDir = join(repo, ".git");
	return {
		head,
		symbolic,
		index: git(repo, "ls-files", "-s"),
		mergeInProgress: ["MERGE_HEAD", "MERGE_MSG", "CHERRY_PICK_HEAD"].some((name) => existsSync(join(gitDir, name))),
		files,
	};
}
