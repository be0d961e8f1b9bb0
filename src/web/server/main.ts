/**
 * The web server process after its entry (server-entry.mjs) loaded the engine: one board service and
 * one BoardFeed over the store, an HTTP server on the given address, its record and token in the store
 * (web-files.ts). SIGTERM stops it (its files go with it); SIGHUP rotates the token, which ends every
 * page's stream and makes every cookie stale.
 */
import { createServer, type Server } from "node:http";
import { processStartTime } from "../../../runner/store/proc.mjs";
import { createBoardService } from "../../board/engine/service.ts";
import { DiffCache } from "../../board/view-model/diff-cache.ts";
import { BoardFeed } from "../../board/view-model/feed.ts";
import { exposureText, hostPort } from "../addresses.ts";
import { claimRecord, dropRecord, ensureWebDir, writeToken } from "../web-files.ts";
import { createApp } from "./app.ts";
import { csrfFor, newToken } from "./auth.ts";
import { EventHub } from "./event-hub.ts";
import { GROUPS, STATES } from "./row-json.ts";
import { loadPage } from "./static-files.ts";

export interface ServerOptions {
	store?: string;
	host?: string;
	port?: string;
	cwd?: string;
}

function log(text: string): void {
	process.stderr.write(`${new Date().toISOString()} ${text}\n`);
}

function listen(server: Server, port: number, host: string): Promise<number> {
	return new Promise((resolve, reject) => {
		server.once("error", reject);
		server.listen(port, host, () => {
			server.off("error", reject);
			const address = server.address();
			resolve(typeof address === "object" && address ? address.port : port);
		});
	});
}

export async function runServer(options: ServerOptions): Promise<void> {
	const storeDir = options.store;
	const host = options.host ?? "127.0.0.1";
	const wanted = Number(options.port ?? "0");
	if (!storeDir) throw new Error("--store is required");
	ensureWebDir(storeDir);
	const service = createBoardService({ storeDir });
	const feed = new BoardFeed(() => service);
	const diffs = new DiffCache();
	const hub = new EventHub(feed, diffs);
	let token = newToken();
	let port = wanted;
	const server = createServer(
		createApp({
			token: () => token,
			bindHost: host,
			page: loadPage(),
			api: {
				service,
				feed,
				hub,
				cwd: options.cwd ?? process.cwd(),
				session: () => ({
					csrf: csrfFor(token),
					listen: hostPort(host, port),
					store: service.storeDir,
					groups: GROUPS,
					states: STATES,
					exposure: exposureText(host, port),
					now: Date.now(),
				}),
			},
		}),
	);
	// Streams stay open for hours; requests must not be cut by Node's default timeouts.
	server.requestTimeout = 0;
	server.headersTimeout = 30_000;
	server.keepAliveTimeout = 5_000;
	try {
		port = await listen(server, wanted, host);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		throw new Error(
			code === "EADDRINUSE"
				? `${hostPort(host, wanted)} is in use: pick another with --port`
				: `cannot listen on ${hostPort(host, wanted)}: ${(error as Error).message}`,
		);
	}
	let stopping = false;
	const stop = (why: string): void => {
		if (stopping) return;
		stopping = true;
		log(`stopping: ${why}`);
		hub.stop();
		feed.stop();
		// The record goes last: while it is there, the port may still be held.
		const finish = (): void => {
			dropRecord(storeDir, process.pid);
			process.exit(0);
		};
		server.close(finish);
		server.closeAllConnections();
		setTimeout(finish, 2000).unref();
	};
	process.on("SIGTERM", () => stop("SIGTERM"));
	process.on("SIGINT", () => stop("SIGINT"));
	process.on("SIGHUP", () => {
		token = newToken();
		writeToken(storeDir, process.pid, token);
		// Open pages hold the old cookie: their streams end, and their next request is refused.
		hub.closeAll();
		log("token rotated: every browser is logged out");
	});
	process.on("uncaughtException", (error) => {
		log(`uncaught: ${error.stack ?? error.message}`);
		stop("uncaught exception");
	});
	const start = processStartTime(process.pid);
	if (!start) throw new Error("cannot read this process's start time");
	const other = claimRecord(storeDir, { pid: process.pid, start, host, port, startedAt: Date.now() });
	if (other) {
		server.close();
		throw new Error(
			`another web server runs for this store: pid ${other.pid} on ${hostPort(other.host, other.port)}`,
		);
	}
	// After the claim, so a second server never touches the first one's token; it names this pid.
	writeToken(storeDir, process.pid, token);
	log(`serving ${storeDir} on ${hostPort(host, port)} (pid ${process.pid})`);
	hub.start();
	void feed.start();
	void feed.fill().done;
}
