/**
 * Retention: old runs of ARCHIVED rows lose their bulky logs (events, stderr, runner log). Session
 * files, run configs and status.json stay, so a row's final state and its conversation remain.
 * Unarchived rows, the row's current run, the newest `keepRuns` runs and any run that is not
 * finished or still has a live process are never touched. Nothing is followed through a symlink.
 */
import { lstatSync, readdirSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isTerminal } from "../../../runner/life/state-rules.mjs";
import { isValidId } from "./ids.ts";
import { storePaths } from "./paths.ts";
import { FileCache, listRowIds, processAlive, readMeta, readProcess, readStatus } from "./store.ts";
import { fsErrorMessage, guardStore } from "./store-guard.ts";

/** Per-run files that gc may delete; everything else in a run directory is kept. */
export const TRIMMED_FILES = ["events.jsonl", "stderr.log", "runner.log"];
const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_MAX_AGE_DAYS = 14;
export const DEFAULT_KEEP_RUNS = 1;
/** Stamp of the last automatic gc in the store root: autoGc runs at most once per day per store. */
export const AUTO_GC_STAMP = "gc-last";

export interface GcOptions {
	dryRun?: boolean;
	/** Only runs that ended more than this many days ago (default 14, env AGENT_BOARD_GC_DAYS). */
	maxAgeDays?: number;
	/** Newest runs of each row that are always kept (default 1, env AGENT_BOARD_GC_KEEP). */
	keepRuns?: number;
	env?: NodeJS.ProcessEnv;
	now?: number;
}

export interface GcFile {
	path: string;
	bytes: number;
}

export interface GcReport {
	dryRun: boolean;
	maxAgeDays: number;
	keepRuns: number;
	/** Archived rows looked at. */
	rows: number;
	/** Runs whose logs were (or would be) removed. */
	runs: number;
	files: GcFile[];
	bytes: number;
	/** Problems met on the way (unreadable rows, failed unlinks); gc carries on past them. */
	errors: string[];
}

function envNumber(value: string | undefined, fallback: number, min: number): number {
	const parsed = Number(value);
	return value !== undefined && value.trim() !== "" && Number.isFinite(parsed) && parsed >= min ? parsed : fallback;
}

export function gcDefaults(env: NodeJS.ProcessEnv = process.env): { maxAgeDays: number; keepRuns: number } {
	return {
		maxAgeDays: envNumber(env.AGENT_BOARD_GC_DAYS, DEFAULT_MAX_AGE_DAYS, 0),
		keepRuns: Math.floor(envNumber(env.AGENT_BOARD_GC_KEEP, DEFAULT_KEEP_RUNS, 1)),
	};
}

interface RunInfo {
	runId: string;
	dir: string;
	createdAt: number;
	endedAt: number;
	finished: boolean;
}

function runsOf(runsDir: string, errors: string[]): RunInfo[] {
	let names: string[];
	try {
		names = readdirSync(runsDir);
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code !== "ENOENT")
			errors.push(fsErrorMessage(error, runsDir, "cannot read"));
		return [];
	}
	const runs: RunInfo[] = [];
	for (const runId of names.filter(isValidId)) {
		const dir = join(runsDir, runId);
		try {
			const status = readStatus(dir, new FileCache());
			// A run with a live runner or worker is never trimmed, whatever its status says.
			const live =
				processAlive(readProcess(join(dir, "runner.json"))) || processAlive(readProcess(join(dir, "worker.json")));
			runs.push({
				runId,
				dir,
				createdAt: status.createdAt,
				endedAt: status.endedAt ?? status.updatedAt,
				finished: isTerminal(status.state) && !live,
			});
		} catch (error) {
			// Unreadable or odd runs are left alone: gc only deletes what it fully understands.
			errors.push(`${dir}: ${error instanceof Error ? error.message : String(error)}`);
		}
	}
	return runs.sort((a, b) => b.createdAt - a.createdAt || (a.runId < b.runId ? 1 : -1));
}

function trimRun(dir: string, dryRun: boolean, report: GcReport): void {
	let trimmed = false;
	for (const name of TRIMMED_FILES) {
		const path = join(dir, name);
		let bytes: number;
		try {
			const stat = lstatSync(path);
			if (!stat.isFile()) continue;
			bytes = stat.size;
		} catch {
			continue;
		}
		try {
			if (!dryRun) unlinkSync(path);
			report.files.push({ path, bytes });
			report.bytes += bytes;
			trimmed = true;
		} catch (error) {
			report.errors.push(fsErrorMessage(error, path, "cannot remove"));
		}
	}
	if (trimmed) report.runs += 1;
}

export function gc(storeDir: string, options: GcOptions = {}): GcReport {
	const defaults = gcDefaults(options.env);
	const maxAgeDays = options.maxAgeDays ?? defaults.maxAgeDays;
	const keepRuns = Math.max(1, Math.floor(options.keepRuns ?? defaults.keepRuns));
	const now = options.now ?? Date.now();
	const report: GcReport = {
		dryRun: options.dryRun === true,
		maxAgeDays,
		keepRuns,
		rows: 0,
		runs: 0,
		files: [],
		bytes: 0,
		errors: [],
	};
	guardStore(storeDir);
	const paths = storePaths(storeDir);
	const cache = new FileCache();
	for (const id of listRowIds(paths)) {
		let meta: ReturnType<typeof readMeta>;
		try {
			meta = readMeta(paths, id, cache);
		} catch (error) {
			report.errors.push(`row ${id}: ${error instanceof Error ? error.message : String(error)}`);
			continue;
		}
		if (!meta.archived) continue;
		report.rows += 1;
		const runs = runsOf(paths.runs(id), report.errors);
		runs.forEach((run, index) => {
			if (index < keepRuns || run.runId === meta.currentRunId || !run.finished) return;
			if (now - run.endedAt < maxAgeDays * DAY_MS) return;
			trimRun(run.dir, report.dryRun, report);
		});
	}
	return report;
}

export function formatBytes(bytes: number): string {
	if (bytes < 1024) return `${bytes} B`;
	if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
	return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** What `/agent-board gc` prints: one summary line, then each file, then problems. */
export function formatGcReport(report: GcReport): string {
	const verb = report.dryRun ? "would free" : "freed";
	const lines = [
		`gc: ${verb} ${formatBytes(report.bytes)} in ${report.files.length} file${report.files.length === 1 ? "" : "s"} from ${report.runs} run${report.runs === 1 ? "" : "s"} of ${report.rows} archived row${report.rows === 1 ? "" : "s"} (runs ended over ${report.maxAgeDays} days ago, newest ${report.keepRuns} kept)`,
	];
	for (const file of report.files)
		lines.push(`  ${report.dryRun ? "would remove" : "removed"} ${file.path} (${formatBytes(file.bytes)})`);
	for (const error of report.errors) lines.push(`  skipped: ${error}`);
	return lines.join("\n");
}

/**
 * Automatic retention, at most once a day per store (stamp file in the store root, written before the
 * sweep so concurrent pis do not all sweep). Never throws: retention must not break the extension.
 * Returns the report, or undefined when it did not run (recent stamp, AGENT_BOARD_GC=off, an error).
 */
export function autoGc(
	storeDir: string,
	options: { env?: NodeJS.ProcessEnv; now?: number } = {},
): GcReport | undefined {
	const env = options.env ?? process.env;
	if (env.AGENT_BOARD_GC === "off" || env.AGENT_BOARD_GC === "0") return undefined;
	const now = options.now ?? Date.now();
	const stamp = join(storeDir, AUTO_GC_STAMP);
	try {
		guardStore(storeDir);
		try {
			const stat = lstatSync(stamp);
			if (stat.isFile() && now - stat.mtimeMs < DAY_MS) return undefined;
			// Not a plain file: something planted it; do not write through it.
			if (!stat.isFile()) return undefined;
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "ENOENT") return undefined;
		}
		// Replaced, not written through: unlink first so a symlink swapped in meanwhile is not followed.
		try {
			unlinkSync(stamp);
		} catch {
			// Absent is fine.
		}
		writeFileSync(stamp, `${new Date(now).toISOString()}\n`, { mode: 0o600, flag: "wx" });
		utimesSync(stamp, now / 1000, now / 1000);
		return gc(storeDir, { env, now });
	} catch {
		return undefined;
	}
}
