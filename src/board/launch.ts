/** Prepares one run: its config and queued status, then its place in the queue. */
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureDir, writeJsonAtomic } from "../../runner/fs-util.mjs";
import { enqueue } from "../../runner/queue.mjs";
import type { RunConfig } from "../../runner/run-config.mjs";
import { initialStatus } from "../../runner/state-rules.mjs";
import { newId } from "./ids.ts";
import type { StorePaths } from "./paths.ts";
import type { RowMeta } from "./types.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
export const EXTENSION_PATH = resolve(HERE, "../index.ts");

/**
 * The pi that runs the extension also runs the workers; AGENT_BOARD_PI (a path, or a JSON array
 * of argv words) overrides it.
 */
export function resolvePiCommand(env: NodeJS.ProcessEnv = process.env): string[] {
	const override = env.AGENT_BOARD_PI;
	if (override) {
		if (override.trim().startsWith("[")) {
			const parsed = JSON.parse(override) as unknown;
			if (Array.isArray(parsed) && parsed.length > 0 && parsed.every((w) => typeof w === "string")) return parsed as string[];
			throw new Error("AGENT_BOARD_PI: expected a path or a JSON array of strings");
		}
		return [override];
	}
	// A compiled pi binary is its own executable; under node, pi is the script node runs.
	if (!isNode(process.execPath)) return [process.execPath];
	const script = process.argv[1];
	if (script && (/pi-coding-agent/.test(script) || ["pi", "cli.js", "cli.mjs"].includes(basename(script)))) return [process.execPath, script];
	return ["pi"];
}

function isNode(path: string): boolean {
	return /^node(\d+)?(\.exe)?$/.test(basename(path));
}

/** The runner is plain node; inside a compiled pi binary use node from PATH (or AGENT_BOARD_NODE). */
export function nodeCommand(env: NodeJS.ProcessEnv = process.env): string {
	if (env.AGENT_BOARD_NODE) return env.AGENT_BOARD_NODE;
	return isNode(process.execPath) ? process.execPath : "node";
}

export interface LaunchOptions {
	paths: StorePaths;
	meta: RowMeta;
	prompt: string;
	piCommand: string[];
	maxConcurrent: number;
	summaryModel?: string;
	env?: Record<string, string>;
	stopGraceMs?: number;
}

export function newRunId(): string {
	return newId("run-");
}

/**
 * Writes the run's config (0600: it holds the prompt) and its queued status under
 * rows/<id>/runs/<runId>/ (meta.currentRunId must already name it). Callers write meta, then
 * enqueue, so a reader never sees meta pointing at a run without a status.
 */
export function prepareRun(options: LaunchOptions): { runId: string; runDir: string; configPath: string; createdAt: number } {
	const { paths, meta } = options;
	const runId = meta.currentRunId;
	const runDir = paths.run(meta.id, runId);
	ensureDir(runDir);
	const now = Date.now();
	const env: Record<string, string> = {
		AGENT_BOARD_WORKER: "1",
		AGENT_BOARD_ROW: meta.id,
		PONYTAIL_CONDENSED: "1",
		...options.env,
	};
	if (meta.ponytailMode) env.PONYTAIL_DEFAULT_MODE = meta.ponytailMode;
	const config: RunConfig = {
		rowId: meta.id,
		runId,
		runDir,
		storeDir: paths.root,
		maxConcurrent: options.maxConcurrent,
		sessionFile: meta.sessionFile,
		cwd: meta.runCwd,
		prompt: options.prompt,
		piCommand: options.piCommand,
		model: meta.model,
		thinking: meta.thinking,
		extensionPath: EXTENSION_PATH,
		env,
		summaryModel: options.summaryModel,
		stopGraceMs: options.stopGraceMs,
		createdAt: now,
	};
	const configPath = join(runDir, "run.json");
	writeJsonAtomic(configPath, config);
	writeJsonAtomic(join(runDir, "status.json"), initialStatus(runId, meta.id, now));
	return { runId, runDir, configPath, createdAt: now };
}

/** Puts a prepared run in the FIFO queue; pumpQueue() starts it when a slot is free. */
export function queueRun(paths: StorePaths, meta: RowMeta, runDir: string): void {
	enqueue(paths.root, { rowId: meta.id, runId: meta.currentRunId, runDir });
}
