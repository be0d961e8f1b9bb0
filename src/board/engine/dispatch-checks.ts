/** Checks a dispatch's inputs before anything is written: a bad request changes nothing. */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { MAX_MESSAGE_BYTES } from "../../../runner/life/reasons.mjs";
import { MAX_ATTEMPTS, MAX_BURST, THINKING_LEVELS, WORKTREE_MODES } from "../../../runner/life/vocabulary.mjs";
import { BoardError } from "../../../runner/life/reasons.mjs";
import type { BoardRow, DispatchOptions, WorktreeMode } from "./types.ts";
import { headCommit } from "./git/head-commit.ts";
import { repoRoot } from "./git/worktree.ts";

/** Rows in one attempt set at most. */
export { MAX_ATTEMPTS, MAX_BURST };

/** The prompt travels over the control channel, not argv; the bound keeps one run.json sane. */
const MAX_PROMPT_BYTES = 1024 * 1024;

function checkText(text: unknown, what: string, limit: number): string {
	if (typeof text !== "string" || text.trim() === "")
		throw new BoardError("invalid", `${what} must be a non-empty string`);
	// pi's session file and the providers treat NUL as the end of text: refuse rather than truncate.
	if (text.includes("\0")) throw new BoardError("invalid", `${what} contains a NUL byte, which pi cannot carry`);
	const bytes = Buffer.byteLength(text);
	if (bytes > limit) throw new BoardError("too-large", `${what} is ${bytes} bytes; the limit is ${limit}`);
	return text;
}

export function checkPrompt(prompt: unknown): string {
	return checkText(prompt, "prompt", MAX_PROMPT_BYTES);
}

/** A reply's text: it may become a new run's prompt, so it meets both limits (and is worded as one). */
export function checkMessage(text: unknown): string {
	return checkText(text, "prompt", Math.min(MAX_MESSAGE_BYTES, MAX_PROMPT_BYTES));
}

/** `knownRepo`: the cwd's repository root when the caller already asked (checkBranchable), so git is asked once. */
export function checkDispatch(
	options: DispatchOptions,
	knownRepo?: string,
): {
	cwd: string;
	worktreeMode: WorktreeMode;
	repo: string | undefined;
} {
	if (typeof options.cwd !== "string" || !options.cwd) throw new BoardError("invalid", "cwd is required");
	const cwd = resolve(options.cwd);
	let isDir = false;
	try {
		isDir = statSync(cwd).isDirectory();
	} catch {
		throw new BoardError("invalid", `working directory does not exist: ${cwd}`);
	}
	if (!isDir) throw new BoardError("invalid", `working directory is not a directory: ${cwd}`);
	const thinking: unknown = options.thinking;
	if (thinking !== undefined && !THINKING_LEVELS.some((level) => level === thinking))
		throw new BoardError("invalid", `invalid thinking level: ${String(thinking)}`);
	const mode: unknown = options.worktreeMode ?? "none";
	const worktreeMode = WORKTREE_MODES.find((known) => known === mode);
	if (!worktreeMode) throw new BoardError("invalid", `invalid worktree mode: ${String(mode)}`);
	const repo = knownRepo ?? repoRoot(cwd);
	if (worktreeMode === "worktree" && !repo)
		throw new BoardError("invalid", `worktree mode needs a git repository: ${cwd} is not inside one`);
	return { cwd, worktreeMode, repo };
}

/**
 * How many rows one dispatch may start: `most` (MAX_ATTEMPTS, or a larger target's limit: burstLimit),
 * `why` says where a larger bound comes from.
 */
export function checkCount(count: unknown, most = MAX_ATTEMPTS, why = ""): number {
	if (count === undefined) return 1;
	if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > most) {
		throw new BoardError(
			"invalid",
			`count must be a whole number from 1 to ${most}${why} (got ${JSON.stringify(count)})`,
		);
	}
	return count;
}

/** A burst may be as large as the target it goes to allows at once (a pool: its members together), at least MAX_ATTEMPTS. */
export function burstLimit(targetMax: number | undefined): number {
	return Math.min(MAX_BURST, Math.max(MAX_ATTEMPTS, targetMax ?? 0));
}

/**
 * A dispatch that needs its own worktree (an attempt set, a fork, worktree mode) needs a repository
 * with a commit to branch from; `why` names which one it is in the refusal. Returns the repository's root
 * and that commit: the base of every worktree the dispatch makes (an attempt set's all branch from one).
 */
export function checkBranchable(cwd: unknown, why: string): { repo: string; base: string } {
	if (typeof cwd !== "string" || !cwd || !existsSync(cwd))
		throw new BoardError("invalid", `working directory does not exist: ${String(cwd)}`);
	const repo = repoRoot(resolve(cwd));
	if (!repo) throw new BoardError("invalid", `${why} needs a git repository: ${cwd} is not inside one`);
	const base = headCommit(repo);
	if (!base)
		throw new BoardError("invalid", `${why} needs a commit to branch from: repository ${repo} has no commits yet`);
	return { repo, base };
}

/** A row can be forked once it has finished or stopped and has a conversation to copy. */
export function checkForkSource(row: BoardRow): void {
	if (row.state === "queued" || row.state === "working")
		throw new BoardError("invalid", `row ${row.id} is still ${row.state}; fork it once it has finished or stopped`);
	let size = 0;
	try {
		size = statSync(row.sessionFile).size;
	} catch {
		throw new BoardError("invalid", `row ${row.id} has no session file to fork (${row.sessionFile})`);
	}
	if (size === 0)
		throw new BoardError("invalid", `row ${row.id}'s session file is empty; there is no conversation to fork`);
}
