// Every running row of a target has one owner on this machine: the target's link, one process for all of
// them (runner/link/target-link.mjs <store>/targets/<name>/link; docs/engine-targets.md, "One link per target").
// Under <store>/targets/<name>/link/: link.json (the link process: pid and start), runs/<runId>.json (the
// runs handed to it, which it owns until it records their end) and lock. Handing a run over (the queue's
// claim, a relink) and a link deciding it is idle and leaving both hold the lock, so a run is never
// handed to a link on its way out; the hand-over names the link in the run's runner.json at once, so
// every reader sees an owner.
import { spawn } from "node:child_process";
import { closeSync, existsSync, readdirSync, unlinkSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { openAppend } from "../store/append-file.mjs";
import { ensureDir, writeJsonAtomic } from "../store/fs-util.mjs";
import { isAlive, processStartTime, RUN_TAG } from "../store/proc.mjs";
import { tryLockFile } from "../store/row-lock.mjs";
import { readJsonObject, readProcessFile } from "../store/safe-read.mjs";
import { isValidId } from "../store/store-layout.mjs";
import { linkDir } from "./target-health.mjs";

export const LINK_PATH = resolve(dirname(fileURLToPath(import.meta.url)), "../link/target-link.mjs");

/** How long a hand-over waits for the target's link lock (held for a few file writes at a time). */
const LOCK_WAIT_MS = 10_000;

/** @param {string} storeDir @param {string} target */
export function linkPaths(storeDir, target) {
	const dir = linkDir(storeDir, target);
	return {
		dir,
		record: join(dir, "link.json"),
		lock: join(dir, "lock"),
		runs: join(dir, "runs"),
		log: join(dir, "link.log"),
	};
}

/** The target's link process when it runs. @param {string} storeDir @param {string} target */
export function liveLink(storeDir, target) {
	const record = readProcessFile(linkPaths(storeDir, target).record);
	return record && isAlive(record.pid, record.start) ? { pid: record.pid, start: String(record.start) } : undefined;
}

/**
 * Runs `fn` holding the target's link lock (a few file writes; waits for another holder).
 * @template T @param {string} storeDir @param {string} target @param {() => T} fn @returns {T}
 */
export function withLinkLock(storeDir, target, fn) {
	const paths = linkPaths(storeDir, target);
	ensureDir(paths.dir);
	const deadline = Date.now() + LOCK_WAIT_MS;
	for (;;) {
		const release = tryLockFile(paths.lock);
		if (release) {
			try {
				return fn();
			} finally {
				release();
			}
		}
		if (Date.now() > deadline)
			throw new Error(`the link of ${target} is busy: ${paths.lock} is held by another process`);
		Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5 + Math.floor(Math.random() * 10));
	}
}

/**
 * @typedef {object} HandedRun
 * @property {string} rowId
 * @property {string} runId
 * @property {string} slot   its slot file (the link takes it over)
 * @property {string} [pool] the pool it was placed from (its pool slot goes with its end)
 */

/** The runs handed to a target's link that it has not finished. @param {string} storeDir @param {string} target @returns {HandedRun[]} */
export function handedRuns(storeDir, target) {
	const dir = linkPaths(storeDir, target).runs;
	let names;
	try {
		names = readdirSync(dir).filter((name) => name.endsWith(".json") && !name.startsWith("."));
	} catch {
		return [];
	}
	/** @type {(HandedRun & { at: number })[]} */
	const runs = [];
	for (const name of names) {
		try {
			const value = readJsonObject(join(dir, name));
			if (
				isValidId(value?.rowId) &&
				isValidId(value?.runId) &&
				`${value.runId}.json` === name &&
				typeof value.slot === "string"
			) {
				runs.push({
					rowId: value.rowId,
					runId: value.runId,
					slot: value.slot,
					...(typeof value.pool === "string" ? { pool: value.pool } : {}),
					at: typeof value.at === "number" ? value.at : 0,
				});
			}
		} catch {
			// Mid-write or torn: read again on the next pass.
		}
	}
	// In the order they were handed over (the queue's order: claims are made one at a time under its
	// lock), not the directory's: a link that finds two started the younger first (tmpfs lists newest first).
	return runs.sort((a, b) => a.at - b.at || (a.runId < b.runId ? -1 : 1)).map(({ at: _at, ...run }) => run);
}

/** The link is done with a run (its end is recorded). @param {string} storeDir @param {string} target @param {string} runId */
export function dropHandedRun(storeDir, target, runId) {
	try {
		unlinkSync(join(linkPaths(storeDir, target).runs, `${runId}.json`));
	} catch {
		// Gone already.
	}
}

/**
 * Starts the target's link, detached, untagged (it owns many runs; a target's slot holds while its run
 * is not over, whatever runs here), on its own log; writes its record for it.
 * @param {string} storeDir @param {string} target @param {{ node: string, env: NodeJS.ProcessEnv }} spawnWith
 */
function startLink(storeDir, target, spawnWith) {
	const paths = linkPaths(storeDir, target);
	const env = { ...spawnWith.env };
	delete env[RUN_TAG];
	const log = openAppend(paths.log);
	try {
		// A small young generation, as a runner's: a long stream's garbage is collected as it comes.
		const child = spawn(spawnWith.node, ["--max-semi-space-size=2", LINK_PATH, paths.dir], {
			detached: true,
			stdio: ["ignore", log, log],
			cwd: paths.dir,
			env,
		});
		child.on("error", () => undefined);
		child.unref();
		const start = child.pid ? processStartTime(child.pid) : undefined;
		if (!child.pid || !start) throw new Error(`could not start the link of ${target} with ${spawnWith.node}`);
		const record = { pid: child.pid, start };
		writeJsonAtomic(paths.record, record);
		return record;
	} finally {
		closeSync(log);
	}
}

/**
 * Gives a claimed run (or one whose link died) to its target's link: recorded among the link's runs,
 * the link started when none runs, and named as the run's owner in its runner.json.
 * @param {string} storeDir @param {string} target @param {string} runDir @param {HandedRun} run
 * @param {{ node: string, env: NodeJS.ProcessEnv }} spawnWith
 * @returns {{ pid: number, start: string }} the link
 */
export function handToLink(storeDir, target, runDir, run, spawnWith) {
	return withLinkLock(storeDir, target, () => {
		const paths = linkPaths(storeDir, target);
		ensureDir(paths.runs);
		writeJsonAtomic(join(paths.runs, `${run.runId}.json`), { ...run, at: Date.now() });
		const link = liveLink(storeDir, target) ?? startLink(storeDir, target, spawnWith);
		writeJsonAtomic(join(runDir, "runner.json"), link);
		return link;
	});
}

/**
 * A link with nothing left to do leaves: under the lock, only when no run waits for it, its record goes
 * (the next hand-over starts a new link). Returns false when it must stay.
 * @param {string} storeDir @param {string} target @param {{ pid: number, start: string }} self
 */
export function leaveIfIdle(storeDir, target, self) {
	try {
		return withLinkLock(storeDir, target, () => {
			if (handedRuns(storeDir, target).length > 0) return false;
			const paths = linkPaths(storeDir, target);
			const record = readProcessFile(paths.record);
			if (record && record.pid === self.pid && String(record.start) === self.start && existsSync(paths.record))
				unlinkSync(paths.record);
			return true;
		});
	} catch {
		return false;
	}
}
