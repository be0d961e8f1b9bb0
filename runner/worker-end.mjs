// Why a run ended that its runner did not end itself, in words a row can show: the kernel's OOM killer
// (the memory cgroup's oom_kill count rose while the worker ran, and the worker died of SIGKILL: "out
// of memory (limit 256m)", not "worker killed by SIGKILL"), or a signal nobody on the board sent (a
// stop from the board comes through the inbox; a SIGTERM without one is `podman stop`, `rm -f` or a
// kill from outside).
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The memory cgroup files of this process: v1's memory controller, else v2's unified one. */
function memoryCgroup() {
	let lines = [];
	try {
		lines = readFileSync("/proc/self/cgroup", "utf8").split("\n");
	} catch {
		return undefined;
	}
	const v1 = lines.find((line) => /^\d+:([^:]*,)?memory(,[^:]*)?:/.test(line));
	if (v1) {
		const path = v1.slice(v1.indexOf(":", v1.indexOf(":") + 1) + 1);
		// Inside a container its own cgroup is mounted at the controller's root.
		return {
			dirs: [join("/sys/fs/cgroup/memory", path), "/sys/fs/cgroup/memory"],
			events: "memory.oom_control",
			limit: "memory.limit_in_bytes",
		};
	}
	const v2 = lines.find((line) => line.startsWith("0::"));
	if (!v2) return undefined;
	return {
		dirs: [join("/sys/fs/cgroup", v2.slice(3)), "/sys/fs/cgroup"],
		events: "memory.events",
		limit: "memory.max",
	};
}

/** @param {string[]} dirs @param {string} file */
function readFirst(dirs, file) {
	for (const dir of dirs) {
		try {
			return readFileSync(join(dir, file), "utf8");
		} catch {
			// The next place.
		}
	}
	return undefined;
}

/** "256m", "2g", or undefined for no limit. @param {number} bytes */
export function limitWords(bytes) {
	if (!Number.isFinite(bytes) || bytes <= 0 || bytes >= 2 ** 60) return undefined;
	for (const [unit, size] of /** @type {const} */ ([
		["g", 1024 ** 3],
		["m", 1024 ** 2],
		["k", 1024],
	]))
		if (bytes % size === 0) return `${bytes / size}${unit}`;
	return `${bytes} bytes`;
}

/**
 * The OOM kill count of this process's memory cgroup as it is now, and a way to ask later whether it
 * rose (the worker runs in the runner's cgroup: a container's, or the user's session's).
 */
export function oomWatch() {
	const cgroup = memoryCgroup();
	const count = () => {
		const text = cgroup ? readFirst(cgroup.dirs, cgroup.events) : undefined;
		const match = text ? /^oom_kill (\d+)$/m.exec(text) : null;
		return match ? Number(match[1]) : undefined;
	};
	const before = count();
	return {
		/** Why the worker's SIGKILL was the OOM killer's ("out of memory (limit 256m)"), or undefined. */
		killed() {
			const now = count();
			if (before === undefined || now === undefined || now <= before) return undefined;
			const raw = cgroup ? readFirst(cgroup.dirs, cgroup.limit)?.trim() : undefined;
			const limit = raw && raw !== "max" ? limitWords(Number(raw)) : undefined;
			return `out of memory (${limit ? `limit ${limit}` : "no limit set"}): the kernel killed the worker`;
		},
	};
}

/**
 * A signal that ended the run without a stop from the board, in the words of where it ran.
 * @param {string} signal @param {string} [layout] run.json's layout
 */
export function outsideSignalReason(signal, layout) {
	if (layout === "container")
		return `its container was killed from outside (${signal}: engine stop or rm -f, not a stop from the board)`;
	return `killed from outside (${signal} to its runner, not a stop from the board)`;
}
