/**
 * The board engine's API: every consumer (dashboard, commands, LLM tools) goes through here. This
 * module only wires the parts: reading a row (row-read.ts), checking and creating dispatched rows
 * (dispatch-checks.ts, dispatch.ts), starting runs (launch.ts), talking to them (run-control.ts),
 * meta changes under the row lock (meta-update.ts), attempt sets (attempts.ts) and the change feed.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { notOver } from "../../../runner/life/phase.mjs";
import { touchNotify } from "../../../runner/store/fs-util.mjs";
import { attemptViews } from "./attempts.ts";
import { dispatchRows, forkOptions } from "./dispatch.ts";
import { createEngineContext, type BoardServiceOptions } from "./engine-context.ts";
import { BoardError } from "../../../runner/life/reasons.mjs";
import { validateId } from "./ids.ts";
import { settleMergeLocked } from "./merge-intent.ts";
import { liveMarkIds, markLive } from "./live-marks.ts";
import { metaUpdates } from "./meta-update.ts";
import type { StorePaths } from "./paths.ts";
import { liveRows, readRow, requireMeta } from "./row-read.ts";
import { controlRun } from "./run-control.ts";
import { guardStore } from "./store-guard.ts";
import { type SafetyPollInput, safetyPoll, storeVersion } from "./store-poll.ts";
import { settle } from "./settle.ts";
import { StoreWatch } from "./store-watch.ts";
import { rowWithWords } from "./row-words.ts";
import { targetsReconciler } from "./reconcile.ts";
import { targetsApi } from "./targets-api.ts";
import { listRowIds, readEventsFile, writeMeta } from "./store.ts";
import type { BoardRow, BoardService, DiffStats, DispatchOptions } from "./types.ts";
import { diffStats, removeWorktreeDir } from "./git/worktree.ts";
import { inert } from "./sanitize.ts";
import { removeFarWork } from "./far-work.ts";
import { loadPresets, presetSummary } from "./policy/presets.ts";
import { budgetControl } from "./policy/budget-control.ts";
import { agentDirOf } from "./policy/rules-paths.ts";

export type { BoardServiceOptions, StorePaths };

/** The service plus engine extras that are not part of the dashboard contract. */
export interface BoardEngine extends BoardService {
	/** Compact worker events of the current run (events.jsonl), oldest first; `limit` keeps the last N. */
	events(id: string, options?: { limit?: number }): Promise<Record<string, unknown>[]>;
	/** Diff stats of a worktree row against its branch point (runs git). */
	diff(id: string): Promise<DiffStats | undefined>;
	/** Starts queued runs while slots are free (the settle step does this too). */
	pump(): void;
	/** The settle step (settle.ts): writes what reads found, on a store this process may write. */
	supervise(options?: { all?: boolean }): Promise<string[]>;
}

export function createBoardService(options: BoardServiceOptions = {}): BoardEngine {
	const ctx = createEngineContext(options);
	const { paths, storeDir } = ctx;
	const meta = metaUpdates(ctx);
	const control = controlRun(ctx);
	const budgets = budgetControl(ctx, meta, control.stop);
	const settleStep = settle(ctx, targetsReconciler(ctx));
	const poll = safetyPoll(ctx, { liveIds: () => liveMarkIds(storeDir) });
	// The board's safety tick: the settle step writes what reads found, then the pass reads what changed unseen.
	const safetyCheck = async (input: SafetyPollInput): Promise<string[]> => [
		...new Set([...(await settleStep()), ...(await poll(input))]),
	];
	const storeWatch = new StoreWatch({ storeRoot: storeDir, safetyCheck, safetyPollMs: ctx.safetyPollMs });

	/** Reads only read (a read-only store lists the same): what they find is written by the settle step. */
	async function list(listOptions?: { includeArchived?: boolean; slim?: boolean }): Promise<BoardRow[]> {
		guardStore(paths.root);
		const rows = listRowIds(paths).map((id) => readRow(ctx, id, listOptions?.slim !== true));
		return listOptions?.includeArchived ? rows : rows.filter((row) => !row.archived);
	}

	async function get(id: string, getOptions?: { slim?: boolean }): Promise<BoardRow | undefined> {
		validateId(id);
		if (!existsSync(paths.row(id))) return undefined;
		return readRow(ctx, id, getOptions?.slim !== true);
	}

	const attempts = attemptViews({
		list,
		get,
		withRowLock: (id, fn) => meta.withLock(id, fn, 120_000),
		changeMeta: (id, change) => meta.changeLocked(id, change),
		settleMerge: (id) => void settleMergeLocked(ctx, id),
	});

	async function dispatchAttempts(dispatchOptions: DispatchOptions): Promise<BoardRow[]> {
		return dispatchRows(ctx, dispatchOptions);
	}

	return {
		storeDir,
		dispatchAttempts,
		async dispatch(dispatchOptions) {
			const [first] = await dispatchAttempts(dispatchOptions);
			if (!first) throw new Error("dispatch started no row");
			return first;
		},
		async fork(id, forkOpts) {
			const source = await get(id);
			if (!source) throw new BoardError("no-such-row", `no such row: ${inert(id)}`);
			return dispatchAttempts(forkOptions(source, forkOpts));
		},
		async reply(id, text, replyOptions) {
			requireMeta(ctx, id);
			return (await budgets.reply(id, text)) ?? control.reply(id, text, replyOptions);
		},
		budget: budgets.raise,
		presets: (cwd) => loadPresets(cwd, agentDirOf(ctx.env)).map(presetSummary),
		stop: control.stop,
		stopOutcome: control.stopOutcome,
		pump: () => ctx.pump(true),
		supervise: settleStep,
		async list(listOptions) {
			return attempts.annotate(await list(listOptions));
		},
		get,
		async liveRows() {
			guardStore(paths.root);
			return liveRows(ctx);
		},
		async rowIds() {
			guardStore(paths.root);
			return listRowIds(paths);
		},
		compare: attempts.compare,
		compareDiff: attempts.compareDiff,
		merge: attempts.merge,
		async archive(id) {
			await meta.update(id, (row) => (row.archived = true));
		},
		async unarchive(id) {
			await meta.update(id, (row) => {
				row.archived = false;
				// Under the row lock: a question asked before the archive counts again.
				markLive(storeDir, id);
			});
		},
		async rename(id, name) {
			if (typeof name !== "string" || !name.trim())
				throw new BoardError("invalid", "name must be a non-empty string");
			await meta.update(id, (row) => (row.name = name.trim()));
		},
		async pin(id, pinned) {
			await meta.update(id, (row) => (row.pinned = pinned));
		},
		async markViewed(id) {
			await meta.update(id, (row) => (row.lastViewedAt = Date.now()));
		},
		async removeWorktree(id, removeOptions) {
			const removed = await meta.withLock(id, () => {
				const current = requireMeta(ctx, id);
				if (!current.worktreePath || !current.repo) throw new BoardError("invalid", `row ${id} has no worktree`);
				const row = readRow(ctx, id);
				if (notOver(row)) throw new BoardError("busy", `row ${id} is still ${row.state}; stop it first`);
				removeWorktreeDir(current.repo, current.worktreePath, removeOptions?.force === true);
				writeMeta(paths, { ...current, worktreePath: undefined, updatedAt: Date.now() });
				touchNotify(storeDir, id);
				return current;
			});
			// The target's copy of the workspace goes with its local mirror (after the lock: it may take an ssh round trip).
			const far = await removeFarWork(ctx, removed);
			return far ? { far } : {};
		},
		async events(id, eventOptions) {
			const current = requireMeta(ctx, id);
			const events = readEventsFile(join(paths.run(id, current.currentRunId), "events.jsonl"));
			return eventOptions?.limit ? events.slice(-eventOptions.limit) : events;
		},
		async diff(id) {
			const current = requireMeta(ctx, id);
			return current.worktreePath ? diffStats(current.worktreePath, current.baseCommit) : undefined;
		},
		async version() {
			return storeVersion(ctx);
		},
		watch(onChange) {
			return storeWatch.subscribe(onChange);
		},
		words: (row) => rowWithWords(ctx, row),
		targets: targetsApi(
			ctx,
			async () => liveRows(ctx),
			() => list({ includeArchived: true }),
		),
	};
}
