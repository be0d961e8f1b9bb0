/** Checks a dispatch's inputs before anything is written: a bad request changes nothing. */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { MAX_MESSAGE_BYTES } from "../../runner/reasons.mjs";
import { THINKING_LEVELS, WORKTREE_MODES } from "../../runner/vocabulary.mjs";
import { BoardError } from "./errors.ts";
import type { DispatchOptions, WorktreeMode } from "./types.ts";
import { repoRoot } from "./worktree.ts";

/** The prompt travels over the control channel, not argv; the bound keeps one run.json sane. */
const MAX_PROMPT_BYTES = 1024 * 1024;

function checkText(text: unknown, what: string, limit: number): string {
	if (typeof text !== "string" || text.trim() === "") throw new BoardError("invalid", `${what} must be a non-empty string`);
	// pi's session file and the providers treat NUL as the end of text: refuse rather than truncate.
	if (text.includes("\0")) throw new BoardError("invalid", `${what} contains a NUL byte, which pi cannot carry`);
	const bytes = Buffer.byteLength(text);
	if (bytes > limit) throw new BoardError("too-large", `${what} is ${bytes} bytes; the limit is ${limit}`);
	return text;
}

export function checkPrompt(prompt: unknown): string {
	return checkText(prompt, "prompt", MAX_PROMPT_BYTES);
}

/** A reply's text: it may become a new run's prompt, so it meets both limits. */
export function checkMessage(text: unknown): string {
	return checkText(text, "message", Math.min(MAX_MESSAGE_BYTES, MAX_PROMPT_BYTES));
}

export function checkDispatch(options: DispatchOptions): { cwd: string; worktreeMode: WorktreeMode; repo: string | undefined } {
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
	if (thinking !== undefined && !THINKING_LEVELS.some((level) => level === thinking)) throw new BoardError("invalid", `invalid thinking level: ${String(thinking)}`);
	const mode: unknown = options.worktreeMode ?? "none";
	const worktreeMode = WORKTREE_MODES.find((known) => known === mode);
	if (!worktreeMode) throw new BoardError("invalid", `invalid worktree mode: ${String(mode)}`);
	const repo = repoRoot(cwd);
	if (worktreeMode === "worktree" && !repo) throw new BoardError("invalid", `worktree mode needs a git repository: ${cwd} is not inside one`);
	return { cwd, worktreeMode, repo };
}
