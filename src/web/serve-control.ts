/**
 * Starting, stopping and rotating the web server from pi (the `serve` subcommand and the switch in `S`).
 * The server is a detached plain-node process of ours (server/server-entry.mjs), like the runner: it
 * outlives this pi. It is found through its record in the store, and signalled only while the pid's
 * start time still matches the record (runner/store/proc.mjs).
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isAlive, processStartTime, RUN_TAG, signalVerified } from "../../runner/store/proc.mjs";
import { nodeCommand, resolvePiCommand } from "../board/engine/commands.ts";
import { baseUrl, exposureText, loginUrl } from "./addresses.ts";
import { piRootFromScript } from "./server/pi-modules.mjs";
import { ensureWebDir, liveRecord, logPath, readRecord, readToken, type ServerRecord } from "./web-files.ts";

export const SERVER_ENTRY = join(dirname(fileURLToPath(import.meta.url)), "server", "server-entry.mjs");

/** How long a server may take to load the engine and listen (a hang guard, not a target). */
const START_WAIT_MS = 60_000;
const STOP_WAIT_MS = 10_000;

export interface Serving {
	record: ServerRecord;
	/** Where a browser opens it (no token). */
	url: string;
	/** The one-time login URL, when this call made or rotated the token. */
	login?: string;
	/** What a non-loopback bind exposes ("" for loopback). */
	exposure: string;
	/** It was already running: nothing was started. */
	already?: boolean;
}

function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

function serving(record: ServerRecord, token?: string, already = false): Serving {
	const url = baseUrl(record.host, record.port);
	return {
		record,
		url,
		...(token ? { login: loginUrl(url, token) } : {}),
		exposure: exposureText(record.host, record.port),
		...(already ? { already } : {}),
	};
}

/** The last lines of the server's log: why it did not start. */
function logTail(storeDir: string): string {
	try {
		const lines = readFileSync(logPath(storeDir), "utf8").trim().split("\n");
		return lines
			.slice(-3)
			.map((line) => line.replace(/^\S+Z /, "").replace(/^agent-board web: /, ""))
			.join("; ");
	} catch {
		return "";
	}
}

export function serverStatus(storeDir: string): ServerRecord | undefined {
	return liveRecord(storeDir);
}

export interface StartOptions {
	storeDir: string;
	host: string;
	port: number;
	/** The new-agent form's cwd when none is remembered. */
	cwd: string;
	env?: NodeJS.ProcessEnv;
}

export async function startServer(options: StartOptions): Promise<Serving> {
	const { storeDir } = options;
	const running = liveRecord(storeDir);
	if (running) return serving(running, undefined, true);
	ensureWebDir(storeDir);
	const env = { ...(options.env ?? process.env) };
	// Its runs start workers with the pi that runs this extension, as the board's do (its own argv is the server's).
	const pi = resolvePiCommand(env);
	env.AGENT_BOARD_PI = JSON.stringify(pi);
	// Not a process of any run: a run's tag would count the server against that run's slot.
	delete env[RUN_TAG];
	const piRoot = piRootFromScript(pi.length > 1 ? pi[1] : pi[0]);
	const args = [
		SERVER_ENTRY,
		"--store",
		storeDir,
		"--host",
		options.host,
		"--port",
		String(options.port),
		"--cwd",
		options.cwd,
		...(piRoot ? ["--pi-root", piRoot] : []),
	];
	const log = openSync(logPath(storeDir), "w", 0o600);
	let exited: string | undefined;
	try {
		const child = spawn(nodeCommand(env), args, { cwd: storeDir, env, detached: true, stdio: ["ignore", log, log] });
		child.on("exit", (code, signal) => (exited = signal ? `signal ${signal}` : `exit ${code}`));
		child.on("error", (error) => (exited = error.message));
		child.unref();
		const childStart = child.pid ? processStartTime(child.pid) : undefined;
		const deadline = Date.now() + START_WAIT_MS;
		while (Date.now() < deadline) {
			await sleep(50);
			let record: ServerRecord | undefined;
			let token: string | undefined;
			try {
				record = readRecord(storeDir);
				token = child.pid ? readToken(storeDir, child.pid) : undefined;
			} catch {
				// Another server's files, or none yet: the child's exit or the deadline decides.
			}
			if (record && token && record.pid === child.pid && isAlive(record.pid, record.start))
				return serving(record, token);
			if (exited) break;
		}
		if (!exited && child.pid) signalVerified(child.pid, childStart, "SIGTERM");
		throw new Error(
			`the web server did not start (${exited ?? "no answer"}): ${logTail(storeDir) || `see ${logPath(storeDir)}`}`,
		);
	} finally {
		closeSync(log);
	}
}

async function waitGone(record: ServerRecord): Promise<boolean> {
	const deadline = Date.now() + STOP_WAIT_MS;
	while (Date.now() < deadline) {
		if (!isAlive(record.pid, record.start)) return true;
		await sleep(50);
	}
	return false;
}

/** Stops the store's server; returns the record it stopped, or undefined when none ran. */
export async function stopServer(storeDir: string): Promise<ServerRecord | undefined> {
	const record = liveRecord(storeDir);
	if (!record) return undefined;
	signalVerified(record.pid, record.start, "SIGTERM");
	if (await waitGone(record)) return record;
	signalVerified(record.pid, record.start, "SIGKILL");
	if (await waitGone(record)) return record;
	throw new Error(`the web server (pid ${record.pid}) did not stop`);
}

/** Asks the server for a new token (SIGHUP) and returns the new login URL once it wrote it. */
export async function rotateToken(storeDir: string): Promise<Serving> {
	const record = liveRecord(storeDir);
	if (!record) throw new Error("no web server runs for this store: start one with /agent-board serve");
	const before = readToken(storeDir, record.pid);
	if (!signalVerified(record.pid, record.start, "SIGHUP"))
		throw new Error(`cannot signal the web server (pid ${record.pid})`);
	const deadline = Date.now() + STOP_WAIT_MS;
	while (Date.now() < deadline) {
		await sleep(25);
		const token = readToken(storeDir, record.pid);
		if (token && token !== before) return serving(record, token);
	}
	throw new Error("the web server did not rotate its token");
}
