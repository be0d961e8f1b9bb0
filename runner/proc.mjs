// Process liveness that survives PID reuse: a pid is only "ours" while its start time matches.
import { readFileSync } from "node:fs";

/**
 * Start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined.
 * @param {number} pid
 * @returns {string | undefined}
 */
export function processStartTime(pid) {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		// The command name (field 2) may contain spaces and parentheses; fields resume after the last ")".
		const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
		return rest[19];
	} catch {
		return undefined;
	}
}

/**
 * @param {number | undefined} pid
 * @param {string | undefined} startTime
 */
export function isAlive(pid, startTime) {
	if (!pid || pid <= 0) return false;
	try {
		process.kill(pid, 0);
	} catch (error) {
		if (/** @type {NodeJS.ErrnoException} */ (error).code !== "EPERM") return false;
	}
	if (!startTime) return true;
	const now = processStartTime(pid);
	// Without /proc we cannot compare; a positive kill(0) is the best evidence available.
	return now === undefined || now === startTime;
}

/**
 * Signals a whole process group; ignores groups that are already gone.
 * @param {number} pid
 * @param {NodeJS.Signals} signal
 */
export function killGroup(pid, signal) {
	try {
		process.kill(-pid, signal);
		return true;
	} catch {
		try {
			process.kill(pid, signal);
			return true;
		} catch {
			return false;
		}
	}
}
