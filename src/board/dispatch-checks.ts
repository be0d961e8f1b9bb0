/** Checks a dispatch's inputs before anything is written: a bad request changes nothing. */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { DispatchOptions, ThinkingLevel, WorktreeMode } from "./types.ts";
import { repoRoot } from "./worktree.ts";

const THINKING: ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];
const WORKTREE_MODES: WorktreeMode[] = ["none", "auto", "worktree"];
/** The prompt travels over the control channel, not argv; the bound keeps one run.json sane. */
const MAX_PROMPT_BYTES = 1024 * 1024;

export function checkPrompt(prompt: unknown): string {
	if (typeof prompt !== "string" || prompt.trim() === "") throw new Error("prompt must be a non-empty string");
	// pi's session file and the providers treat NUL as the end of text: refuse rather than truncate.
	if (prompt.includes("\0")) throw new Error("prompt contains a NUL byte, which pi cannot carry");
	const bytes = Buffer.byteLength(prompt);
	if (bytes > MAX_PROMPT_BYTES) throw new Error(`prompt is ${bytes} bytes; the limit is ${MAX_PROMPT_BYTES}`);
	return prompt;
}

export function checkDispatch(options: DispatchOptions): { cwd: string; worktreeMode: WorktreeMode; repo: string | undefined } {
	if (typeof options.cwd !== "string" || !options.cwd) throw new Error("cwd is required");
	const cwd = resolve(options.cwd);
	let isDir = false;
	try {
		isDir = statSync(cwd).isDirectory();
	} catch {
		throw new Error(`working directory does not exist: ${cwd}`);
	}
	if (!isDir) throw new Error(`working directory is not a directory: ${cwd}`);
	if (options.thinking !== undefined && !THINKING.includes(options.thinking)) throw new Error(`invalid thinking level: ${String(options.thinking)}`);
	const worktreeMode = options.worktreeMode ?? "none";
	if (!WORKTREE_MODES.includes(worktreeMode)) throw new Error(`invalid worktree mode: ${String(worktreeMode)}`);
	const repo = repoRoot(cwd);
	if (worktreeMode === "worktree" && !repo) throw new Error(`worktree mode needs a git repository: ${cwd} is not inside one`);
	return { cwd, worktreeMode, repo };
}
