/** Reads /proc the way an outside observer would: which pi workers and runners of a store are alive. */
import { readdirSync, readFileSync } from "node:fs";

export interface ProcInfo {
	pid: number;
	argv: string[];
}

function zombie(pid: number): boolean {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
		return state === "Z" || state === "X";
	} catch {
		return true;
	}
}

function parentPid(pid: number): number {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
	} catch {
		return 0;
	}
}

function cmdline(pid: number): string | undefined {
	try {
		return readFileSync(`/proc/${pid}/cmdline`, "utf8");
	} catch {
		return undefined;
	}
}

/**
 * Live (non-zombie) processes whose argv matches `predicate`, all alive at one instant: reading /proc
 * takes a while, so a process that exited while later ones started would be counted with them. Each
 * match is checked again after the whole pass; a process seen before the pass ended and still there
 * after it was alive when it ended.
 *
 * A child between fork and exec still shows its parent's argv (a runner starting its pi worker, pi
 * starting a tool): it is not a second runner or worker, so a process whose argv equals its parent's
 * is skipped.
 */
export function scanProcs(predicate: (argv: string[]) => boolean): ProcInfo[] {
	const found: (ProcInfo & { raw: string })[] = [];
	for (const name of readdirSync("/proc")) {
		const pid = Number(name);
		if (!Number.isInteger(pid) || pid <= 0) continue;
		const raw = cmdline(pid);
		if (raw === undefined) continue;
		const argv = raw.split("\0").filter(Boolean);
		if (!argv.length || !predicate(argv) || zombie(pid)) continue;
		if (cmdline(parentPid(pid)) === raw) continue;
		found.push({ pid, argv, raw });
	}
	return found.filter((p) => cmdline(p.pid) === p.raw && !zombie(p.pid)).map(({ pid, argv }) => ({ pid, argv }));
}

/** pi workers of a store: `--session <store>/sessions/<id>.jsonl` in json mode. */
export function storeWorkers(storeDir: string): ProcInfo[] {
	return scanProcs((argv) => argv.includes("json") && argv.some((a) => a.startsWith(`${storeDir}/sessions/`)));
}

/** Runners of a store: job-runner.mjs with a run.json under the store. */
export function storeRunners(storeDir: string): ProcInfo[] {
	return scanProcs(
		(argv) => argv.some((a) => a.endsWith("job-runner.mjs")) && argv.some((a) => a.startsWith(`${storeDir}/`)),
	);
}

/** Every process whose environment carries one of these run ids (what the engine itself looks for). */
export function runTaggedProcs(runIds: readonly string[]): number[] {
	return procsWithEnv(runIds.map((id) => `AGENT_BOARD_RUN_ID=${id}`));
}

/** Live processes (not this one) whose environment holds one of these exact `KEY=value` entries. */
export function procsWithEnv(entries: readonly string[]): number[] {
	const wanted = new Set(entries);
	const out: number[] = [];
	for (const name of readdirSync("/proc")) {
		const pid = Number(name);
		if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
		let env: string[];
		try {
			env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
		} catch {
			continue;
		}
		if (env.some((entry) => wanted.has(entry)) && !zombie(pid)) out.push(pid);
	}
	return out;
}

/** Every argv word of every process (to prove a prompt never travels through argv). */
export function allArgv(): string {
	return scanProcs(() => true)
		.map((p) => p.argv.join(" "))
		.join("\n");
}
