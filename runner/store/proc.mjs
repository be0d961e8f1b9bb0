// Process liveness you can bet a kill on. A pid is "ours" only while its start time (field 22 of
// /proc/<pid>/stat) matches the one recorded; a record without a start time is never trusted; zombies
// are dead; process groups are never signalled. Every process of a run carries RUN_TAG=<runId> in its
// environment, so a run's processes (pi tools in their own process groups included) can be found and
// ended even when the runner that started them is gone.
import { readdirSync, readFileSync } from "node:fs";

export const RUN_TAG = "AGENT_BOARD_RUN_ID";

/**
 * The tag value a run's processes carry where they run: its id for a run of this store (a runner, or the
 * link of a run that runs elsewhere); `<id>@far` for its far side (the runner at a target or in a
 * container, and everything it starts). A target on this machine as this user (ssh localhost, a
 * container's processes seen from the host) must never let an end there (the far runner ending "every
 * process of its run") reach the local link, nor an end here reach the far run.
 * @param {string} runId @param {string} [layout] run.json's layout (absent or "store": this store's)
 */
export function runTag(runId, layout) {
	return layout && layout !== "store" ? `${runId}@far` : runId;
}

/**
 * @param {number} pid
 * @returns {{ state: string, start: string, ppid: number } | undefined}
 */
function readStat(pid) {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		// The command name (field 2) may contain spaces and parentheses; fields resume after the last ")".
		const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
		const state = rest[0];
		const start = rest[19];
		return state && start ? { state, start, ppid: Number(rest[1]) } : undefined;
	} catch {
		return undefined;
	}
}

/**
 * Every live descendant of `pid` now, by /proc parent links, with start times. A process that wiped
 * its environment (`env -i`) carries no run tag, and one in its own session (`setsid`) no process
 * group of ours; while its parent chain leads back to the worker, this still finds it. One /proc scan.
 * @param {number} pid
 * @returns {{ pid: number, start: string }[]}
 */
export function descendants(pid) {
	/** @type {Map<number, { pid: number, start: string }[]>} */
	const children = new Map();
	let names;
	try {
		names = readdirSync("/proc");
	} catch {
		return [];
	}
	for (const name of names) {
		const child = Number(name);
		if (!validPid(child)) continue;
		const stat = readStat(child);
		if (!stat || stat.state === "Z" || stat.state === "X") continue;
		const siblings = children.get(stat.ppid) ?? [];
		siblings.push({ pid: child, start: stat.start });
		children.set(stat.ppid, siblings);
	}
	const found = [];
	for (let queue = [pid]; queue.length > 0; ) {
		const next = queue.shift() ?? 0;
		for (const child of children.get(next) ?? []) {
			found.push(child);
			queue.push(child.pid);
		}
	}
	return found;
}

/** Start time of a live (non-zombie) process, or undefined. @param {number} pid */
export function processStartTime(pid) {
	const stat = readStat(pid);
	return stat && stat.state !== "Z" && stat.state !== "X" ? stat.start : undefined;
}

/** @param {unknown} pid @returns {pid is number} */
function validPid(pid) {
	return typeof pid === "number" && Number.isInteger(pid) && pid > 1;
}

/**
 * True only when `pid` runs and started at `startTime`. Without a start time nothing is provably ours.
 * @param {number | undefined} pid
 * @param {string | undefined} startTime
 */
export function isAlive(pid, startTime) {
	if (!validPid(pid) || typeof startTime !== "string" || !startTime) return false;
	return processStartTime(pid) === startTime;
}

/**
 * Signals one process, only after re-checking that it is still the one recorded.
 * @param {number} pid @param {string | undefined} startTime @param {NodeJS.Signals} signal
 */
export function signalVerified(pid, startTime, signal) {
	if (!isAlive(pid, startTime)) return false;
	try {
		process.kill(pid, signal);
		return true;
	} catch {
		return false;
	}
}

/**
 * Live processes whose environment carries RUN_TAG=<runId> (our own uid's only: others are unreadable).
 * @param {string} runId
 * @param {{ exclude?: number }} [options]
 * @returns {{ pid: number, start: string }[]}
 */
export function runProcesses(runId, options = {}) {
	const needle = Buffer.from(`\0${RUN_TAG}=${runId}\0`);
	const head = Buffer.from(`${RUN_TAG}=${runId}\0`);
	/** @type {{ pid: number, start: string }[]} */
	const found = [];
	let names;
	try {
		names = readdirSync("/proc");
	} catch {
		return found;
	}
	for (const name of names) {
		const pid = Number(name);
		if (!validPid(pid) || pid === options.exclude) continue;
		let environ;
		try {
			environ = readFileSync(`/proc/${pid}/environ`);
		} catch {
			continue;
		}
		if (environ.indexOf(needle) < 0 && !environ.subarray(0, head.length).equals(head)) continue;
		const start = processStartTime(pid);
		if (start) found.push({ pid, start });
	}
	return found;
}

/**
 * Ends every process of a run (except `exclude`): SIGTERM, then SIGKILL after `graceMs`. Resolves
 * when none is left or after the kill wait; returns how many were still alive at the end.
 * @param {string} runId
 * @param {{ exclude?: number, graceMs?: number, signalFirst?: NodeJS.Signals }} [options]
 */
export async function endRunProcesses(runId, options = {}) {
	const graceMs = options.graceMs ?? 0;
	let procs = runProcesses(runId, { exclude: options.exclude });
	if (procs.length === 0) return 0;
	if (graceMs > 0) {
		for (const p of procs) signalVerified(p.pid, p.start, options.signalFirst ?? "SIGTERM");
		const deadline = Date.now() + graceMs;
		while (Date.now() < deadline) {
			await sleep(50);
			procs = procs.filter((p) => isAlive(p.pid, p.start));
			if (procs.length === 0) return 0;
		}
	}
	for (let round = 0; round < 40; round++) {
		// New children may appear while we kill their parents: rescan each round.
		procs = runProcesses(runId, { exclude: options.exclude });
		if (procs.length === 0) return 0;
		for (const p of procs) signalVerified(p.pid, p.start, "SIGKILL");
		await sleep(25);
	}
	return runProcesses(runId, { exclude: options.exclude }).length;
}

/** @param {number} ms */
function sleep(ms) {
	return new Promise((resolve) => setTimeout(resolve, ms));
}
