/**
 * The launcher: how a row's run starts. It writes the run's config and queued status, then the meta
 * that names the run, then the run's queue entry, and pumps the queue; the queue starts the runner
 * when a slot is free. Every run starts here, a dispatch's first run and a resume alike, so where a
 * run goes is decided in one place: a row with a target (docs/engine.md, "Targets") gets the target's
 * config snapshotted into run.json (an edit or removal never changes a run in flight) and its entry in
 * that target's queue; the queue starts its link instead of a runner.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { getAgentDir } from "@earendil-works/pi-coding-agent";
import { ensureDir, touchNotify, writeJsonAtomic } from "../../../runner/store/fs-util.mjs";
import { enqueue } from "../../../runner/life/queue.mjs";
import { buildRunConfig, type RunConfig } from "../../../runner/life/run-config.mjs";
import { initialStatus } from "../../../runner/life/state-rules.mjs";
import { EXTENSION_PATH } from "./commands.ts";
import type { EngineContext } from "./engine-context.ts";
import { BoardError } from "../../../runner/life/reasons.mjs";
import { newId } from "./ids.ts";
import { markLive } from "./live-marks.ts";
import { writeMeta } from "./store.ts";
import { targetSnapshot } from "./dispatch-target.ts";
import { launchExtras } from "./policy/launch-extras.ts";
import type { RowMeta } from "./types.ts";

export function newRunId(): string {
	return newId("run-");
}

/** `<store>/tmp`, 0700: the local workers' TMPDIR. */
function privateTmp(ctx: EngineContext): string {
	const tmp = join(ctx.paths.root, "tmp");
	ensureDir(tmp);
	return tmp;
}

/** run.json: everything the runner needs, the prompt included (the file is 0600; argv never sees it). */
function runConfig(ctx: EngineContext, meta: RowMeta, prompt: string, runDir: string, now: number): RunConfig {
	const env: Record<string, string> = {
		PONYTAIL_CONDENSED: "1",
		...(meta.ponytailMode ? { PONYTAIL_DEFAULT_MODE: meta.ponytailMode } : {}),
	};
	// The preset's system text travels with the run; the rules files the supervisor reads stay here.
	const { supervise, systemPrompt } = launchExtras(ctx, meta);
	const run = {
		rowId: meta.id,
		runId: meta.currentRunId,
		prompt,
		model: meta.model,
		thinking: meta.thinking,
		env,
		summaryModel: ctx.summaryModel,
		stopGraceMs: ctx.stopGraceMs,
		createdAt: now,
		...(systemPrompt ? { systemPrompt } : {}),
	};
	// Every path is derived from the ids, like every path the runner writes (the runner checks it).
	// A local worker's TMPDIR is the store's own (a target's far side gives its runs <dir>/tmp): jiti and
	// node keep their caches under it, and a shared /tmp/jiti belongs to whichever user ran pi first; a
	// worker that cannot write there compiles our extension on every start (2.3x).
	const place = {
		runDir,
		storeDir: ctx.paths.root,
		sessionFile: ctx.paths.session(meta.id),
		cwd: meta.runCwd,
		extensionPath: EXTENSION_PATH,
		piCommand: ctx.piCommand(),
		maxConcurrent: ctx.maxConcurrent,
		...(meta.target ? {} : { env: { TMPDIR: privateTmp(ctx) } }),
	};
	const worktreeBase = worktreeToMake(meta);
	// A row in a worktree: its run makes it when its first run has not (runner/life/row-worktree.mjs).
	const worktree =
		meta.repo && meta.worktreePath
			? { repo: meta.repo, worktree: meta.worktreePath, ...(worktreeBase ? { worktreeBase } : {}) }
			: {};
	const config = buildRunConfig(
		run,
		place,
		meta.target
			? {
					target: targetSnapshot(ctx.storeDir, meta.target),
					...worktree,
					agentDir: ctx.env.PI_CODING_AGENT_DIR || getAgentDir(),
				}
			: worktree,
	);
	return { ...config, ...(supervise ? { supervise } : {}) };
}

/**
 * Starts the run `meta.currentRunId` of the row `meta` with `prompt`. The run's files come first and
 * meta after them, so a reader never sees meta naming a run without a status; the queue entry comes
 * last, so nothing starts a run whose row is not written. Errors leave the caller to clean up.
 */
export function launchRun(ctx: EngineContext, meta: RowMeta, prompt: string): void {
	const runDir = ctx.paths.run(meta.id, meta.currentRunId);
	const now = Date.now();
	// First: a target that is gone refuses the run before anything is written.
	const config = runConfig(ctx, meta, prompt, runDir, now);
	ensureDir(runDir);
	writeJsonAtomic(join(runDir, "run.json"), config);
	writeJsonAtomic(join(runDir, "status.json"), initialStatus(meta.currentRunId, meta.id, now));
	writeMeta(ctx.paths, meta);
	// Before the queue entry: a run that can start is always in the live summary.
	markLive(ctx.paths.root, meta.id);
	enqueue(ctx.paths.root, {
		rowId: meta.id,
		runId: meta.currentRunId,
		...(meta.target ? { target: meta.target } : {}),
	});
	touchNotify(ctx.storeDir, meta.id);
	try {
		ctx.pump(true);
	} catch {
		// The run is queued; a later read starts it or says why it cannot start.
	}
}

/**
 * A row's worktree that is not there yet (made by the run that starts, runner/life/row-worktree.mjs): the
 * commit it branches from. A worktree removed since has no path in meta any more.
 */
function worktreeToMake(meta: RowMeta): string | undefined {
	if (!meta.worktreePath || !meta.baseCommit) return undefined;
	return existsSync(meta.worktreePath) ? undefined : meta.baseCommit;
}

/** A new run of an existing row on its session, with the earlier conversation (the caller holds the row lock). */
export function resumeRun(ctx: EngineContext, meta: RowMeta, prompt: string): void {
	// A row in a worktree works at the cwd's place there, or at its top when its commit has no such directory.
	const here = meta.worktreePath ?? meta.runCwd;
	if (!existsSync(here) && !worktreeToMake(meta))
		throw new BoardError("invalid", `working directory does not exist: ${here}`);
	launchRun(ctx, { ...meta, currentRunId: newRunId(), updatedAt: Date.now() }, prompt);
}
