/**
 * Several loopback "hosts" for fleet tests and benches: each a Unix user of its own behind its own
 * sshd (test-support/sshd.ts, sshd's default limits, sessions logged), with pi configured for the
 * scripted model, added to a board as an ssh target and checked (our files installed). What the hosts
 * themselves show: the far runners each user runs now (its process table), and the sessions and
 * connections its sshd logged (a session refused for MaxSessions is logged "no more sessions").
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { BoardEngine } from "../src/board/engine/service.ts";
import type { ModelServer } from "./model-server.ts";
import { startSshHost, type SshHost } from "./sshd.ts";

export interface FleetHost {
	/** The board's target name. */
	name: string;
	host: SshHost;
}

/** Starts `names.length` hosts, one after another (useradd takes a lock), and adds each to `board`. */
export async function startFleet(
	board: BoardEngine,
	model: ModelServer,
	names: string[],
	max: number | number[],
): Promise<FleetHost[]> {
	const fleet: FleetHost[] = [];
	try {
		for (const [i, name] of names.entries()) {
			const host = await startSshHost({ alias: `pab-${name}`, logLevel: "VERBOSE" });
			fleet.push({ name, host });
			host.user.writePiConfig({
				models: model.modelsJson(),
				auth: model.authJson(),
				settings: model.settingsJson(),
			});
			await board.targets.add(name, {
				kind: "ssh",
				host: host.alias,
				sshConfig: host.configFile,
				max: Array.isArray(max) ? (max[i] ?? 1) : max,
			});
			const check = await board.targets.check(name, { install: true });
			if (!check.ok)
				throw new Error(`targets check ${name}: ${JSON.stringify(check.items.filter((item) => !item.ok))}`);
		}
	} catch (error) {
		await stopFleet(fleet);
		throw error;
	}
	return fleet;
}

export async function stopFleet(fleet: readonly FleetHost[]): Promise<void> {
	for (const { host } of fleet) await host.cleanup().catch(() => undefined);
}

/**
 * The runs whose far runner lives on `host`: the distinct run.json each job-runner.mjs process names. A
 * runner's child between fork and exec still shows the runner's command line, so counting processes
 * would count a runner twice while it starts its worker.
 */
export function hostRuns(host: SshHost): string[] {
	const runs = new Set<string>();
	for (const pid of host.user.processes()) {
		try {
			const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
			const run = argv[argv.findIndex((arg) => arg.endsWith("job-runner.mjs")) + 1];
			if (argv.some((arg) => arg.endsWith("job-runner.mjs")) && run) runs.add(run);
		} catch {
			// Exited while we looked.
		}
	}
	return [...runs];
}

export interface SessionLog {
	/** TCP connections accepted. */
	connections: number;
	/** Sessions open at once on one connection, at most. */
	maxSessions: number;
	/** Sessions started in all. */
	sessions: number;
	/** Sessions sshd refused ("no more sessions": MaxSessions reached). */
	refused: number;
}

/** What the host's sshd logged (LogLevel VERBOSE): connections, sessions at once per connection, refusals. */
export function sessionLog(host: SshHost): SessionLog {
	let text = "";
	try {
		text = readFileSync(join(host.root, "sshd.log"), "utf8");
	} catch {
		// Nothing logged yet.
	}
	const open = new Map<string, number>();
	let maxSessions = 0;
	let sessions = 0;
	for (const line of text.split("\n")) {
		const start = /Starting session: .* port (\d+) id \d+/.exec(line);
		const close = /Close session: .* port (\d+) id \d+/.exec(line);
		if (start?.[1]) {
			sessions += 1;
			const now = (open.get(start[1]) ?? 0) + 1;
			open.set(start[1], now);
			maxSessions = Math.max(maxSessions, now);
		} else if (close?.[1]) open.set(close[1], Math.max(0, (open.get(close[1]) ?? 0) - 1));
	}
	return {
		connections: text.split("\n").filter((line) => /Accepted publickey/.test(line)).length,
		maxSessions,
		sessions,
		refused: text.split("\n").filter((line) => /no more sessions/.test(line)).length,
	};
}

/** Calls `sample` every `everyMs` until stopped; returns what it returned, in order. */
export function sampleEvery<T>(everyMs: number, sample: () => T): { stop(): T[] } {
	const values: T[] = [sample()];
	const timer = setInterval(() => values.push(sample()), everyMs);
	return {
		stop() {
			clearInterval(timer);
			values.push(sample());
			return values;
		},
	};
}

/**
 * Every live process of this machine whose command line holds `needle` (the links, ssh clients), less
 * children between fork and exec: such a child shows its parent's command line for a moment.
 */
export function processesMentioning(needle: string): number[] {
	const found = new Map<number, { cmdline: string; ppid: number }>();
	for (const name of readdirSync("/proc")) {
		const pid = Number(name);
		if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
		try {
			const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
			if (!cmdline.includes(needle)) continue;
			// stat's fields after the command's ")" : state, ppid, ...
			const ppid = Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ").at(-1)?.split(" ")[1]);
			found.set(pid, { cmdline, ppid });
		} catch {
			// Exited while we looked.
		}
	}
	return [...found].filter(([, { cmdline, ppid }]) => found.get(ppid)?.cmdline !== cmdline).map(([pid]) => pid);
}
