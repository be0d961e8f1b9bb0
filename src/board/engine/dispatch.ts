/**
 * Dispatching: a checked request becomes rows. Each row's meta is written whole, its attempt-set
 * membership included, before its first run is launched, so no reader ever sees an attempt row
 * without its attempt. A row that cannot be written leaves nothing behind.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { DIR_MODE } from "../../../runner/store/fs-util.mjs";
import {
	burstLimit,
	checkBranchable,
	checkCount,
	checkDispatch,
	checkForkSource,
	checkPrompt,
	MAX_ATTEMPTS,
} from "./dispatch-checks.ts";
import { readBoardConfig } from "../../../runner/life/board-config.mjs";
import { LOCAL_TARGET } from "../../../runner/life/vocabulary.mjs";
import type { EngineContext } from "./engine-context.ts";
import { BoardError } from "../../../runner/life/reasons.mjs";
import { newId } from "./ids.ts";
import { launchRun, newRunId } from "./launch.ts";
import { readRow, requireMeta } from "./row-read.ts";
import { describeFsError, fsErrorMessage, isUnwordedFsError, removeHalfRow } from "./store-guard.ts";
import { checkDispatchTarget } from "./dispatch-target.ts";
import { checkDispatchPowers } from "./dispatch-powers.ts";
import { listRowIds } from "./store.ts";
import type { AttemptInfo, BoardRow, DispatchOptions, RowMeta, WorktreeMode } from "./types.ts";
import { headCommit } from "./git/head-commit.ts";
import { branchName } from "../../../runner/far/git-workspace.mjs";
import { worktreeRunCwd } from "../../../runner/life/row-worktree.mjs";
import { notOver } from "../../../runner/life/phase.mjs";
import { withPreset } from "./policy/apply-preset.ts";
import { agentDirOf } from "./policy/rules-paths.ts";

/** What a fork runs when the caller gives no prompt: carry on from the copied conversation. */
export const DEFAULT_FORK_PROMPT = "Continue from where this conversation left off.";

/** One row to create: the checked request plus what the set gives each member. */
interface RowPlan {
	prompt: string;
	name: string;
	cwd: string;
	repo: string | undefined;
	worktreeMode: WorktreeMode;
	options: DispatchOptions;
	/** A target's name; undefined: this machine. */
	target: string | undefined;
	attempt?: AttemptInfo;
	/** Session file whose conversation the row continues. */
	forkSession?: string;
	/** The commit its worktree branches from, when the dispatch has read it (checkBranchable). */
	base?: string;
}

/** Every row started for `options`: one, or an attempt set of `count` (a fork is a set too), one after another; each row's git runs without holding the event loop. */
export async function dispatchRows(ctx: EngineContext, requested: DispatchOptions): Promise<BoardRow[]> {
	const options = withPreset(requested, agentDirOf(ctx.env));
	const named =
		typeof options.target === "string" && options.target !== LOCAL_TARGET
			? readBoardConfig(ctx.storeDir).targets[options.target]
			: undefined;
	const count = checkCount(
		options.count,
		burstLimit(named?.max),
		named && named.max > MAX_ATTEMPTS ? ` on ${options.target}, its limit` : "",
	);
	const source = options.forkFrom === undefined ? undefined : existingRow(ctx, options.forkFrom);
	if (source) checkForkSource(source);
	const set = count > 1 || source !== undefined;
	let branchable: { repo: string; base: string } | undefined;
	if (set || options.worktreeMode === "worktree") {
		branchable = checkBranchable(
			options.cwd,
			count > 1
				? "an attempt set (each attempt runs in its own worktree)"
				: source
					? "a fork (it runs in a fresh worktree)"
					: "worktree mode",
		);
	}
	ctx.init();
	const prompt = checkPrompt(options.prompt);
	const onTarget = checkDispatchTarget(ctx.storeDir, options.target, options.cwd);
	const target = onTarget?.name;
	// A `$` budget its model cannot reach: refused, not ignored.
	checkDispatchPowers(options, agentDirOf(ctx.env));
	// A set, a fork and a target run each need a worktree of their own.
	const { cwd, worktreeMode, repo } = checkDispatch(
		set || target ? { ...options, worktreeMode: "worktree" } : options,
		branchable?.repo,
	);
	const plan = { prompt, cwd, repo, worktreeMode, options, target, base: branchable?.base ?? onTarget?.base };
	if (!set) return [await createRow(ctx, { ...plan, name: options.name?.trim() || oneLine(prompt, 60) })];
	const setId = newId("set-");
	const baseName = options.name?.trim() || oneLine(prompt, 56);
	const forkSession = source && requireMeta(ctx, source.id).sessionFile;
	const rows: BoardRow[] = [];
	for (let index = 1; index <= count; index++) {
		const name = source ? `${source.name.slice(0, 48)} fork ${index}/${count}` : `${baseName} [${index}/${count}]`;
		const attempt: AttemptInfo = { setId, index, count, ...(source ? { forkOf: source.id } : {}) };
		rows.push(await createRow(ctx, { ...plan, name, attempt, forkSession }));
	}
	return rows;
}

/** The options that fork `source`: N rows from a copy of its conversation. */
export function forkOptions(source: BoardRow, options: { count?: number; prompt?: string } = {}): DispatchOptions {
	return {
		prompt: options.prompt ?? DEFAULT_FORK_PROMPT,
		cwd: source.cwd,
		model: source.model,
		thinking: source.thinking,
		ponytailMode: source.ponytailMode,
		count: options.count ?? 1,
		forkFrom: source.id,
		// A fork runs where its source ran.
		...(source.target ? { target: source.target } : {}),
	};
}

function existingRow(ctx: EngineContext, id: string): BoardRow {
	requireMeta(ctx, id);
	return readRow(ctx, id);
}

function oneLine(text: string, max: number): string {
	return text.replace(/\s+/g, " ").trim().slice(0, max);
}

/** Worktree mode "auto" isolates a row only when another row is writing in the same checkout. */
function activeWriterInRepo(ctx: EngineContext, repo: string): boolean {
	return listRowIds(ctx.paths).some((id) => {
		const row = readRow(ctx, id);
		return row.repo === repo && !row.worktreePath && notOver(row);
	});
}

async function createRow(ctx: EngineContext, plan: RowPlan): Promise<BoardRow> {
	const { paths } = ctx;
	const { options, repo, cwd } = plan;
	const id = newId("");
	const rowDir = paths.row(id);
	const now = Date.now();
	const meta: RowMeta = {
		version: 1,
		id,
		name: plan.name,
		cwd,
		runCwd: cwd,
		repo,
		sessionFile: paths.session(id),
		createdAt: now,
		updatedAt: now,
		pinned: false,
		archived: false,
		model: options.model,
		thinking: options.thinking,
		worktreeMode: plan.worktreeMode,
		ponytailMode: options.ponytailMode,
		currentRunId: newRunId(),
		...(plan.attempt ? { attempt: plan.attempt } : {}),
		...(plan.target ? { target: plan.target } : {}),
		...(options.preset ? { preset: options.preset } : {}),
		...(options.budget ? { budget: options.budget } : {}),
		...(options.setBudget && plan.attempt ? { setBudget: options.setBudget } : {}),
	};
	try {
		mkdirSync(rowDir, { mode: DIR_MODE });
	} catch (error) {
		throw new BoardError("dispatch-failed", describeFsError(error, rowDir, "cannot create row").message, {
			cause: error,
		});
	}
	try {
		const isolate =
			plan.worktreeMode === "worktree" ||
			(plan.worktreeMode === "auto" && repo !== undefined && activeWriterInRepo(ctx, repo));
		if (repo && (plan.target || isolate)) {
			// Made by the process that claims the run, when it starts (runner/life/row-worktree.mjs): the call runs no git.
			const base = plan.base ?? headCommit(repo);
			if (!base) throw new Error(`cannot create a worktree: ${repo} has no commits yet`);
			const path = paths.worktree(id);
			Object.assign(meta, {
				worktreePath: path,
				branch: branchName(id),
				baseCommit: base,
				runCwd: worktreeRunCwd(repo, cwd, path),
			});
		}
		if (plan.forkSession) seedFork(plan.forkSession, meta.sessionFile, meta.runCwd);
		launchRun(ctx, meta, plan.prompt);
	} catch (error) {
		// The row directory is ours, created just now: remove it (its worktree is made only by its run).
		removeHalfRow(paths.rows, id);
		const path = (error as NodeJS.ErrnoException).path ?? rowDir;
		const text = isUnwordedFsError(error)
			? fsErrorMessage(error, path, "dispatch failed, cannot write")
			: `dispatch failed: ${error instanceof Error ? error.message : String(error)}`;
		throw new BoardError("dispatch-failed", text, { cause: error });
	}
	return readRow(ctx, id);
}

/**
 * Writes `target` as a fork of the session file `source` with pi's own SessionManager (new session
 * id, parentSession header, every entry copied), re-homed to `cwd`. pi names its files itself, so
 * the fork is made in a scratch directory and moved to the row's fixed path.
 */
export function seedFork(source: string, target: string, cwd: string): void {
	const scratch = mkdtempSync(join(dirname(target), ".fork-"));
	try {
		const file = SessionManager.forkFrom(source, cwd, scratch).getSessionFile();
		if (!file || !existsSync(file)) throw new Error(`pi did not write a forked session for ${source}`);
		chmodSync(file, 0o600);
		renameSync(file, target);
	} finally {
		rmSync(scratch, { recursive: true, force: true });
	}
}
