import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * The commit HEAD names, remembered per repository root for this process: `git rev-parse HEAD` was a
 * process per dispatch that makes a worktree, and a process costs most when the machine is busiest (a
 * fleet's dispatch, docs/engine.md). A remembered commit is used only while the files git would read for
 * it are unchanged: `.git/HEAD`, the branch's loose ref and `packed-refs`, each by inode, mtime and size
 * (git replaces each by a rename, so an update is always a new inode). Anything else (a linked worktree's
 * `.git` file, a reftable, a symbolic ref pointing at another, a HEAD git cannot resolve) is asked of git
 * every time and never remembered.
 */
interface Remembered {
	signature: string;
	commit: string;
}

const remembered = new Map<string, Remembered>();
const REMEMBERED_MAX = 256;
const COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** The commit HEAD names in the repository whose root is `repo`, undefined when it has no commits yet. */
export function headCommit(repo: string): string | undefined {
	const signature = headSignature(repo);
	const known = remembered.get(repo);
	if (signature !== undefined && known?.signature === signature) return known.commit;
	remembered.delete(repo);
	const commit = askGit(repo);
	// Read again after git: a ref that moved while git ran is not remembered under the older files.
	if (commit && signature !== undefined && headSignature(repo) === signature) {
		if (remembered.size >= REMEMBERED_MAX) remembered.clear();
		remembered.set(repo, { signature, commit });
	}
	return commit;
}

function askGit(repo: string): string | undefined {
	try {
		return (
			execFileSync("git", ["rev-parse", "--verify", "-q", "HEAD"], {
				cwd: repo,
				encoding: "utf8",
				stdio: ["ignore", "pipe", "ignore"],
				timeout: 15_000,
			}).trim() || undefined
		);
	} catch {
		return undefined;
	}
}

/**
 * What the files behind HEAD are now, or undefined when the layout is not the plain one (then git is
 * asked every time). @param repo the repository's root
 */
function headSignature(repo: string): string | undefined {
	const gitDir = join(repo, ".git");
	try {
		if (!statSync(gitDir).isDirectory()) return undefined;
		const head = readFileSync(join(gitDir, "HEAD"), "utf8").trim();
		const parts = [fileSignature(join(gitDir, "HEAD")), fileSignature(join(gitDir, "packed-refs"))];
		if (COMMIT.test(head)) return parts.join("|");
		const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(head)?.[1];
		if (!ref || ref.split("/").some((part) => part === "..")) return undefined;
		const loose = join(gitDir, ref);
		const looseSignature = fileSignature(loose);
		if (looseSignature !== "none" && !COMMIT.test(readFileSync(loose, "utf8").trim())) return undefined;
		if (fileSignature(join(gitDir, "reftable")) !== "none") return undefined;
		return [...parts, looseSignature].join("|");
	} catch {
		return undefined;
	}
}

function fileSignature(path: string): string {
	try {
		const stat = statSync(path, { bigint: true });
		return `${stat.ino}:${stat.mtimeNs}:${stat.size}`;
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return "none";
		throw error;
	}
}
