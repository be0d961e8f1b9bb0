/** Starts one run: writes its config and queued status, then spawns the detached runner. */
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureDir, FILE_MODE, writeJsonAtomic } from "../../runner/fs-util.mjs";
import { processStartTime } from "../../runner/proc.mjs";
import { finalize, initialStatus, type RunStatus } from "../../runner/state-rules.mjs";
import { newId } from "./ids.ts";
import type { StorePaths } from "./paths.ts";
import type { RowMeta } from "./store.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
export const RUNNER_PATH = resolve(HERE, "../../runner/job-runner.mjs");
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
 * Writes the run's config and queued status under rows/<id>/runs/<runId>/ (meta.currentRunId must
 * already name it), then spawns the runner. Callers write meta between prepare and start so a reader
 * never sees meta pointing at a run without a status.
 */
export function prepareRun(options: LaunchOptions): { runId: string; runDir: string; configPath: string } {
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
	const config = {
		rowId: meta.id,
		runId,
		runDir,
		slotsDir: paths.slots,
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
	return { runId, runDir, configPath };
}

export function startRunner(runDir: string, configPath: string, cwd: string, env: NodeJS.ProcessEnv = process.env): void {
	const logFd = openSync(join(runDir, "runner.log"), "a", FILE_MODE);
	try {
		const node = nodeCommand(env);
		const child = spawn(node, [RUNNER_PATH, configPath], { detached: true, stdio: ["ignore", logFd, logFd], cwd, env });
		// Without a runner nobody else will ever finish this run: record the failure on the spot.
		child.on("error", (error) => {
			const status = JSON.parse(readFileSync(join(runDir, "status.json"), "utf8")) as RunStatus;
			finalize(status, { code: null, signal: null, spawnError: `could not start the runner with ${node}: ${error.message}`, now: Date.now() });
			writeJsonAtomic(join(runDir, "status.json"), status);
		});
		if (child.pid) writeJsonAtomic(join(runDir, "runner.json"), { pid: child.pid, start: processStartTime(child.pid) });
		child.unref();
	} finally {
		closeSync(logFd);
	}
}
