/**
 * What every part of the engine shares for one store: its paths and environment, the parsed-file
 * cache, the concurrency limit, the queue pump, and what reads noted for the settle step. Created
 * once per service; the parts (row reader, dispatch, launcher, run control, store poll, supervise)
 * take it instead of closing over each other.
 */
import { accessSync, constants, existsSync } from "node:fs";
import { resolve } from "node:path";
import { DISK_FULL_BYTES, diskSpace, ensureDir } from "../../../runner/store/fs-util.mjs";
import { ensureKeeper } from "../../../runner/keeper/ensure-keeper.mjs";
import { pumpQueue, queueDir } from "../../../runner/life/queue.mjs";
import { nodeCommand, resolvePiCommand } from "./commands.ts";
import { defaultStoreDir, storePaths, type StorePaths } from "./paths.ts";
import { seedEmptyLive } from "./live-marks.ts";
import { guardStore } from "./store-guard.ts";
import { FileCache } from "./store.ts";

export interface BoardServiceOptions {
	storeDir?: string;
	piCommand?: string[];
	maxConcurrent?: number;
	/** Grace before a stop escalates from abort to signals (ms). */
	stopGraceMs?: number;
	/** Environment for the store defaults, runners and workers (default process.env). */
	env?: NodeJS.ProcessEnv;
	/** watch(): interval of the safety poll behind fs.watch (default 10 s). */
	safetyPollMs?: number;
}

/** What a read found still to be written: a derived end, a new link, a merge intent's outcome. */
export type Pending = "end" | "relink" | "requeue" | "merge";

export interface EngineContext {
	readonly env: NodeJS.ProcessEnv;
	readonly storeDir: string;
	readonly paths: StorePaths;
	readonly cache: FileCache;
	readonly maxConcurrent: number;
	readonly summaryModel: string | undefined;
	readonly stopGraceMs: number | undefined;
	readonly safetyPollMs: number | undefined;
	/** The pi command workers run (resolved on first use). */
	piCommand(): string[];
	/** Creates the store's directories after refusing a foreign or group/world-writable store. */
	init(): void;
	/** init() where a read-only or full store must still be listed. */
	tryInit(): void;
	/** Starts queued runs while slots are free; at most every PUMP_MIN_INTERVAL_MS unless forced. */
	pump(force?: boolean): void;
	/** Why the queue could not start a run at the last pump, if it could not. */
	queueBlocked(): string | undefined;
	/** "disk full: ..." while the store's disk has no room (one statfs a second at most), else undefined. */
	diskFull(): string | undefined;
	/** Rows whose run was not over when last read, with their "state:alive": the safety tick re-checks them. */
	readonly liveRows: Map<string, string>;
	/** Rows whose last read found something to write (settle.ts writes it). */
	readonly pending: Map<string, Pending>;
	/** Whether this process may write the store (a read-only store, or one of another user, is only read). */
	writable(): boolean;
}

const PUMP_MIN_INTERVAL_MS = 200;
const DISK_CHECK_MS = 1000;

export function createEngineContext(options: BoardServiceOptions = {}): EngineContext {
	const env = options.env ?? process.env;
	const storeDir = resolve(options.storeDir ?? defaultStoreDir(env));
	const paths = storePaths(storeDir);
	const fromEnv = Number(env.AGENT_BOARD_MAX_RUNNING);
	const summary = env.AGENT_BOARD_SUMMARY_MODEL;
	let piCommand = options.piCommand;
	let lastPump = 0;
	let blocked: string | undefined;
	let disk: { at: number; full: string | undefined } = { at: 0, full: undefined };
	const maxConcurrent = options.maxConcurrent ?? (fromEnv > 0 ? fromEnv : 4);

	const context: EngineContext = {
		env,
		storeDir,
		paths,
		cache: new FileCache(),
		maxConcurrent,
		summaryModel: summary && summary !== "off" ? summary : undefined,
		stopGraceMs: options.stopGraceMs,
		safetyPollMs: options.safetyPollMs,
		liveRows: new Map(),
		pending: new Map(),
		piCommand() {
			piCommand ??= resolvePiCommand(env);
			return piCommand;
		},
		init() {
			guardStore(paths.root);
			// A new store has no rows to seed the live summary from: it starts complete.
			const fresh = !existsSync(paths.rows);
			for (const dir of [paths.root, paths.rows, paths.sessions, paths.slots, paths.worktrees, queueDir(storeDir)])
				ensureDir(dir);
			if (fresh) seedEmptyLive(storeDir);
		},
		tryInit() {
			try {
				context.init();
			} catch {
				// Listing must keep working on a read-only or full store.
			}
		},
		pump(force = false) {
			if (!force && Date.now() - lastPump < PUMP_MIN_INTERVAL_MS) return;
			lastPump = Date.now();
			blocked = pumpQueue(storeDir, { maxConcurrent, node: nodeCommand(env), env }).error;
			// What the queue still holds moves with no board open from now on (docs/engine.md, "The keeper").
			ensureKeeper(storeDir, { maxConcurrent, node: nodeCommand(env), env });
		},
		queueBlocked: () => blocked,
		writable() {
			try {
				accessSync(storeDir, constants.W_OK);
				return true;
			} catch {
				return false;
			}
		},
		diskFull() {
			if (Date.now() - disk.at > DISK_CHECK_MS) {
				const free = diskSpace(storeDir);
				disk = {
					at: Date.now(),
					full:
						free !== undefined && free < DISK_FULL_BYTES
							? `disk full: ${free} bytes free on the store's disk (${storeDir})`
							: undefined,
				};
			}
			return disk.full;
		},
	};
	return context;
}
