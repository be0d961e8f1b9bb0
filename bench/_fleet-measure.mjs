// What bench/fleet.mjs reads off this machine while a burst runs: the processes a set of rows costs
// here (/proc: PSS from smaps_rollup, CPU from utime+stime), and what each host's sshd logged during
// a phase (sessions open at once on the host, connections, "no more sessions").
import { readdirSync, readFileSync } from "node:fs";

const HZ = 100;

/** @typedef {{ pid: number, key: string, ppid: number, comm: string, cmd: string, own: number, reaped: number, pssKb: number }} Proc */

/** One process as /proc has it now, or undefined when it is gone or not of `uids`. @param {number} pid @param {Set<number>} uids */
function readProc(pid, uids) {
	try {
		const status = readFileSync(`/proc/${pid}/status`, "utf8");
		if (!uids.has(Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]))) return undefined;
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
		const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
		const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
		// Fields after the comm: 1 ppid, 11 utime, 12 stime, 13 cutime, 14 cstime, 19 starttime.
		const n = (/** @type {number} */ i) => Number(rest[i]);
		return {
			pid,
			key: `${pid}@${rest[19]}`,
			ppid: n(1),
			comm,
			cmd,
			own: n(11) + n(12),
			reaped: n(13) + n(14),
			pssKb: 0,
		};
	} catch {
		return undefined;
	}
}

/** @param {number} pid */
function pssKb(pid) {
	try {
		return Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0);
	} catch {
		return 0;
	}
}

/**
 * The processes of `uids` (default: this process's uid) a predicate picks, plus every descendant of a picked
 * one (git and ssh a link starts).
 * @param {(p: Proc) => boolean} pick @param {Set<number>} [uids] @returns {Proc[]}
 */
export function processesWhere(pick, uids = new Set([process.getuid?.() ?? 0])) {
	/** @type {Proc[]} */
	const all = [];
	for (const name of readdirSync("/proc")) {
		const pid = Number(name);
		if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
		const proc = readProc(pid, uids);
		if (proc) all.push(proc);
	}
	const chosen = new Set(all.filter(pick).map((p) => p.pid));
	for (let grew = true; grew; ) {
		grew = false;
		for (const p of all)
			if (!chosen.has(p.pid) && chosen.has(p.ppid)) {
				chosen.add(p.pid);
				grew = true;
			}
	}
	const out = all.filter((p) => chosen.has(p.pid));
	for (const p of out) p.pssKb = pssKb(p.pid);
	return out;
}

/**
 * Samples a set of processes every `everyMs` until stopped: process counts and summed PSS per sample,
 * and the CPU they used between start and stop (each process's last sighting; a child that exited is
 * counted once, in its parent's reaped time, when the parent is in the set).
 * @param {() => Proc[]} read @param {number} everyMs
 */
export function sampleProcesses(read, everyMs) {
	/** @type {{ at: number, count: number, pssKb: number, comms: string }[]} */
	const samples = [];
	/** @type {Map<string, Proc>} */
	const first = new Map();
	/** @type {Map<string, Proc>} */
	const last = new Map();
	const startedAt = Date.now();
	const take = () => {
		const procs = read();
		const counts = new Map();
		for (const p of procs) counts.set(p.comm, (counts.get(p.comm) ?? 0) + 1);
		samples.push({
			at: Date.now(),
			count: procs.length,
			pssKb: procs.reduce((sum, p) => sum + p.pssKb, 0),
			comms: [...counts]
				.map(([c, n]) => `${n} ${c}`)
				.sort()
				.join(", "),
		});
		for (const p of procs) {
			if (!first.has(p.key)) first.set(p.key, samples.length === 1 ? p : { ...p, own: 0, reaped: 0 });
			last.set(p.key, p);
		}
	};
	take();
	const timer = setInterval(take, everyMs);
	return {
		/** @returns {{ samples: typeof samples, cpuSeconds: number, seconds: number }} */
		stop() {
			clearInterval(timer);
			take();
			const endProcs = read();
			const alive = new Set(endProcs.map((p) => p.key));
			const alivePids = new Set(endProcs.map((p) => p.pid));
			let ticks = 0;
			for (const [key, end] of last) {
				const begin = first.get(key);
				ticks += end.reaped - (begin?.reaped ?? 0);
				// A child gone by now whose parent is still here: its time is in the parent's reaped time.
				if (!alive.has(key) && alivePids.has(end.ppid)) continue;
				ticks += end.own - (begin?.own ?? 0);
			}
			return { samples, cpuSeconds: ticks / HZ, seconds: (Date.now() - startedAt) / 1000 };
		},
	};
}

/** Lines in a host's sshd log so far (a phase reads from here on). @param {string} log */
export function logLines(log) {
	try {
		return readFileSync(log, "utf8").split("\n").length - 1;
	} catch {
		return 0;
	}
}

/**
 * What a host's sshd logged from line `from` on: sessions open at once on the host (every connection,
 * sessions opened earlier included), connections accepted, sessions started and refused.
 * @param {string} log @param {number} from
 */
export function phaseSessions(log, from) {
	/** @type {string[]} */
	let lines = [];
	try {
		lines = readFileSync(log, "utf8").split("\n");
	} catch {
		// Nothing logged.
	}
	/** @type {Map<string, number>} */
	const open = new Map();
	const total = () => [...open.values()].reduce((a, b) => a + b, 0);
	let atOnce = 0;
	let perConnection = 0;
	let connections = 0;
	let sessions = 0;
	let refused = 0;
	lines.forEach((line, i) => {
		const start = /Starting session: .* port (\d+) id \d+/.exec(line);
		const close = /Close session: .* port (\d+) id \d+/.exec(line);
		const gone = /(?:Connection closed|Disconnected from|Close session).* port (\d+)/.exec(line);
		if (start?.[1]) open.set(start[1], (open.get(start[1]) ?? 0) + 1);
		else if (close?.[1]) open.set(close[1], Math.max(0, (open.get(close[1]) ?? 0) - 1));
		else if (gone?.[1] && !/Close session/.test(line)) open.delete(gone[1]);
		if (i < from) return;
		if (start) sessions += 1;
		if (/Accepted publickey/.test(line)) connections += 1;
		if (/no more sessions/.test(line)) refused += 1;
		atOnce = Math.max(atOnce, total());
		perConnection = Math.max(perConnection, ...open.values(), 0);
	});
	// Sessions still open when the phase began count as open during it.
	return { atOnce, perConnection, connections, sessions, refused };
}

/** The machine's CPU time so far, busy and all, in clock ticks (/proc/stat's first line). */
export function machineTicks() {
	const first = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
	const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = first
		.trim()
		.split(/\s+/)
		.slice(1)
		.map(Number);
	const busy = user + nice + system + irq + softirq + steal;
	// Idle and iowait are the time nothing ran.
	return { busy, all: busy + idle + iowait };
}
