// Detached owner of one run: spawned by pumpQueue() once the run holds a slot. It spawns the pi worker,
// is the only writer of the run's files (status.json, events.jsonl, receipts/, logs), serves the run's
// control channel (inbox/ on disk, fd 3 to the worker), and leaves a terminal state, a free slot and no
// process of the run behind, whatever happens. Usage: node job-runner.mjs <run.json> <slot-file>
import { spawn } from "node:child_process";
import { appendFileSync, chmodSync, existsSync, watch } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { addReceipt, applyEvent, finalize, initialStatus, summarize, visibleKey } from "./state-rules.mjs";
import { compactEvent } from "./compact-event.mjs";
import { ensureDir, FILE_MODE, touchNotify, writeJsonAtomic } from "./fs-util.mjs";
import { claimMessages, inboxDir, preview, rejectionReceipt, stopWaiting, writeReceipt } from "./inbox.mjs";
import { LineSplitter } from "./lines.mjs";
import { endRunProcesses, processStartTime, RUN_TAG, runProcesses, signalVerified } from "./proc.mjs";
import { PROMPT_PLACEHOLDER } from "./protocol.mjs";
import { pumpQueue, recordStartFailure } from "./queue.mjs";
import { readRunConfig } from "./run-config.mjs";
import { adoptSlot, releaseSlot } from "./slots.mjs";
import { openWorkerLink } from "./worker-link.mjs";

const STATUS_INTERVAL_MS = 250;
const INBOX_POLL_MS = 1000;
const STDERR_TAIL = 4000;
const STDERR_LOG_CAP = 256 * 1024;

/**
 * A run.json of the wrong shape is refused: its run is recorded failed with the path and the field
 * (in the directory the file is in, the one place it can name truthfully), its slot freed.
 * @param {string} path @param {string} slot
 */
function readConfig(path, slot) {
	const dir = dirname(resolve(path));
	try {
		const read = readRunConfig(path);
		if (resolve(read.runDir) !== dir) throw new Error(`${path}: /runDir is not the directory of run.json`);
		return read;
	} catch (error) {
		const reason = error instanceof Error ? error.message : String(error);
		process.stderr.write(`agent-board runner: ${reason}\n`);
		recordStartFailure(dir, reason);
		releaseSlot(slot, basename(dir));
		process.exit(1);
	}
}

const [configPath, slotPath] = process.argv.slice(2);
if (!configPath || !slotPath) {
	process.stderr.write("usage: job-runner.mjs <run.json> <slot-file>\n");
	process.exit(2);
}
const config = readConfig(configPath, slotPath);
const runDir = config.runDir;
const paths = {
	status: join(runDir, "status.json"),
	events: join(runDir, "events.jsonl"),
	stderr: join(runDir, "stderr.log"),
	runner: join(runDir, "runner.json"),
	worker: join(runDir, "worker.json"),
};
const selfStart = processStartTime(process.pid);
writeJsonAtomic(paths.runner, { pid: process.pid, start: selfStart });
adoptSlot(slotPath, { pid: process.pid, start: selfStart, runId: config.runId });

const status = initialStatus(config.runId, config.rowId, config.createdAt);
status.state = "working";
status.startedAt = Date.now();
status.summary = "Starting pi";

let lastWrite = 0;
let lastKey = "";
let lastState = "";
/** @type {NodeJS.Timeout | undefined} */
let pendingWrite;
let stderrLogged = 0;
/** @type {import("node:child_process").ChildProcess | undefined} */
let worker;
/** @type {string | undefined} */
let workerStart;
/** @type {ReturnType<typeof openWorkerLink> | undefined} */
let link;
let stopping = false;
let finished = false;
let agentStarted = false;
let workerClosed = false;
/** Forwarded, waiting for the worker's receipt (the worker holds them until its agent starts). @type {Map<string, import("./inbox.mjs").InboxMessage>} */
const forwarded = new Map();

/** A full or failing disk must not kill the run: the write is retried with the next change. */
let writeFailure = "";
function writeStatus() {
	if (pendingWrite) clearTimeout(pendingWrite);
	pendingWrite = undefined;
	lastWrite = Date.now();
	try {
		writeJsonAtomic(paths.status, status);
		lastKey = visibleKey(status);
		lastState = status.state;
		writeFailure = "";
	} catch (error) {
		writeFailure = `${paths.status}: ${error instanceof Error ? error.message : String(error)}`;
		process.stderr.write(`agent-board runner: cannot write ${writeFailure}\n`);
		return false;
	}
	touchNotify(config.storeDir, config.rowId);
	return true;
}

/** Appends to a run log; a full disk loses log lines, never the run. @param {string} path @param {string} text */
function appendLog(path, text) {
	try {
		appendFileSync(path, text, { mode: FILE_MODE });
	} catch {
		// Reported through the status write that fails next, or lost with the disk.
	}
}

/** Writes only what a reader could see, state changes at once, the rest at most every STATUS_INTERVAL_MS. */
function scheduleStatus() {
	if (status.state !== lastState) return writeStatus();
	if (pendingWrite) return;
	if (visibleKey(status) === lastKey) return;
	const wait = Math.max(0, lastWrite + STATUS_INTERVAL_MS - Date.now());
	pendingWrite = setTimeout(() => (visibleKey(status) === lastKey ? (pendingWrite = undefined) : writeStatus()), wait);
}

writeStatus();

/** @param {import("../src/board/types.ts").Receipt} receipt */
function record(receipt) {
	writeReceipt(runDir, receipt);
	addReceipt(status, receipt);
	scheduleStatus();
}

/** @param {import("./inbox.mjs").InboxMessage} message @param {import("./protocol.mjs").DeliveryKind} [as] */
function delivered(message, as) {
	record({ id: message.id, status: "delivered", as, at: Date.now(), preview: preview(message.text ?? message.kind) });
}

/** @param {import("./inbox.mjs").InboxMessage} message @param {import("./reasons.mjs").ReceiptCode} code */
function rejected(message, code) {
	record(rejectionReceipt(message.id, code, Date.now(), preview(message.text ?? message.kind)));
}

/** @param {import("./inbox.mjs").InboxMessage} message */
function forward(message) {
	if (workerClosed || finished || !link?.send({ type: "message", id: message.id, text: message.text ?? "", deliverAs: message.deliverAs ?? "steer" })) {
		rejected(message, "run-ended");
		return;
	}
	forwarded.set(message.id, message);
}

function serveInbox() {
	for (const message of claimMessages(runDir)) {
		if ("rejected" in message) record(rejectionReceipt(message.id, message.rejected, Date.now(), "", message.detail));
		else if (message.kind === "stop" && !finished) {
			delivered(message);
			stop();
		} else if (finished || workerClosed || stopping) rejected(message, "run-ended");
		else forward(message);
	}
	scheduleStatus();
}

ensureDir(inboxDir(runDir));
const inboxWatcher = watch(inboxDir(runDir), () => serveInbox());
inboxWatcher.on("error", () => undefined);
const inboxPoll = setInterval(serveInbox, INBOX_POLL_MS);

/** @param {{ code: number | null, signal: string | null, spawnError?: string }} exit */
async function finish(exit) {
	if (finished) return;
	finished = true;
	inboxWatcher.close();
	clearInterval(inboxPoll);
	link?.close();
	finalize(status, { ...exit, stopped: stopping, now: Date.now() });
	protectSession();
	writeStatus();
	// pi starts tools in their own process groups: end whatever of this run is still running.
	await endRunProcesses(config.runId, { exclude: process.pid, graceMs: 500 });
	// Before its agent started the worker delivers nothing: an unanswered message certainly missed the run.
	for (const message of forwarded.values()) rejected(message, agentStarted ? "unconfirmed" : "run-ended");
	forwarded.clear();
	serveInbox();
	// The end of a run must be recorded: on a full disk keep trying for a while before giving up.
	for (let attempt = 0; !writeStatus() && attempt < 60; attempt++) await new Promise((r) => setTimeout(r, 500));
	releaseSlot(slotPath, config.runId);
	const env = { ...process.env };
	delete env[RUN_TAG];
	pumpQueue(config.storeDir, { maxConcurrent: config.maxConcurrent, node: process.execPath, env });
	if (config.summaryModel && !stopping && exit.spawnError === undefined) await modelSummary(env);
	process.exit(0);
}

/** pi creates the session file with the default umask; the store keeps files private. */
function protectSession() {
	try {
		chmodSync(config.sessionFile, FILE_MODE);
	} catch {
		// Not created (yet): nothing to protect.
	}
}

/** Stop: ask the worker to abort, then TERM it, then KILL everything of the run. */
function stop() {
	if (stopping) return;
	stopping = true;
	status.stopRequested = true;
	scheduleStatus();
	if (!worker?.pid) {
		void finish({ code: null, signal: null });
		return;
	}
	link?.send({ type: "abort" });
	const pid = worker.pid;
	const grace = config.stopGraceMs ?? 3000;
	setTimeout(() => signalVerified(pid, workerStart, "SIGTERM"), grace).unref();
	setTimeout(() => void endRunProcesses(config.runId, { exclude: process.pid }), grace * 2).unref();
}

for (const signal of /** @type {const} */ (["SIGTERM", "SIGINT", "SIGHUP"])) process.on(signal, stop);

function workerArgs() {
	const args = [...config.piCommand.slice(1), "--mode", "json", "-p", "--session", config.sessionFile];
	if (config.model) args.push("--model", config.model);
	if (config.thinking) args.push("--thinking", config.thinking);
	if (config.extensionPath) args.push("-e", config.extensionPath);
	// The prompt itself travels over fd 3: argv is readable by every local user, and pi reads "@" as a file.
	args.push("--", PROMPT_PLACEHOLDER);
	return args;
}

/** @param {string} chunk */
function onStderr(chunk) {
	status.stderrTail = ((status.stderrTail ?? "") + chunk).slice(-STDERR_TAIL);
	if (stderrLogged < STDERR_LOG_CAP) {
		const part = chunk.slice(0, STDERR_LOG_CAP - stderrLogged);
		stderrLogged += part.length;
		appendLog(paths.stderr, part);
	}
	scheduleStatus();
}

/** @param {Record<string, unknown>} event */
function onWorkerEvent(event) {
	if (event.type === "agent_start") agentStarted = true;
	if (event.type === "message_end") {
		protectSession();
		const message = /** @type {{ role?: string, content?: unknown }} */ (event.message ?? {});
		// Without the worker role nobody replaced the placeholder: fail loudly rather than let the model guess.
		if (message.role === "user" && JSON.stringify(message.content ?? "").includes(PROMPT_PLACEHOLDER)) {
			status.error = "the worker did not load the agent-board extension, so the prompt could not be delivered";
			if (worker?.pid) signalVerified(worker.pid, workerStart, "SIGKILL");
		}
	}
}

function startWorker() {
	const command = config.piCommand[0] ?? "pi";
	const child = spawn(command, workerArgs(), {
		cwd: config.cwd,
		env: { ...process.env, ...config.env, AGENT_BOARD_CONTROL_FD: "3", [RUN_TAG]: config.runId },
		stdio: ["ignore", "pipe", "pipe", "pipe"],
	});
	worker = child;
	const stdout = /** @type {import("node:stream").Readable} */ (child.stdout);
	const stderr = /** @type {import("node:stream").Readable} */ (child.stderr);
	if (child.pid) {
		workerStart = processStartTime(child.pid);
		writeJsonAtomic(paths.worker, { pid: child.pid, start: workerStart });
	}
	link = openWorkerLink(/** @type {import("node:stream").Duplex | null} */ (child.stdio[3]), (report) => {
		if (report.type === "closed") {
			workerClosed = true;
			return;
		}
		const message = forwarded.get(report.id);
		if (!message) return;
		forwarded.delete(report.id);
		if (report.status === "delivered") delivered(message, report.as);
		else rejected(message, report.code ?? "run-ended");
	});
	link.send({ type: "prompt", text: config.prompt });
	const lines = new LineSplitter();
	let seq = 0;
	/** @param {string} line */
	const onLine = (line) => {
		const record = line.endsWith("\r") ? line.slice(0, -1) : line;
		if (!record.startsWith("{")) return;
		/** @type {Record<string, unknown>} */
		let event;
		try {
			event = JSON.parse(record);
		} catch {
			return;
		}
		const now = Date.now();
		seq += 1;
		appendLog(paths.events, `${JSON.stringify(compactEvent(event, seq, now))}\n`);
		applyEvent(status, event, now);
		onWorkerEvent(event);
	};
	const stdoutDone = new Promise((resolve) => {
		stdout.setEncoding("utf8").on("data", (/** @type {string} */ chunk) => {
			for (const line of lines.push(chunk)) onLine(line);
			scheduleStatus();
		});
		stdout.on("end", resolve);
		stdout.on("error", resolve);
	});
	stderr.setEncoding("utf8").on("data", onStderr);
	child.on("error", (error) => {
		const code = /** @type {NodeJS.ErrnoException} */ (error).code;
		const reason = code === "ENOENT" ? `pi not found: ${command}` : `could not start pi (${command}): ${error.message}`;
		void finish({ code: null, signal: null, spawnError: reason });
	});
	// "exit", not "close": pi's tools may inherit fd 3 and keep it open after pi is gone.
	child.on("exit", (code, signal) => {
		const flushed = Promise.race([stdoutDone, new Promise((r) => setTimeout(r, 2000))]);
		void flushed.then(() => {
			const tail = lines.flush();
			if (tail) onLine(tail);
			void finish({ code, signal });
		});
	});
}

/** @param {NodeJS.ProcessEnv} env the runner's environment without the run's tag */
async function modelSummary(env) {
	const command = config.piCommand[0] ?? "pi";
	const prompt = `Summarize in one short sentence (max 15 words) what this agent run achieved or is blocked on:\n\n${status.latestAssistant ?? status.error ?? status.state}`;
	// The prompt goes through stdin (pi -p reads piped stdin), never argv.
	const args = [...config.piCommand.slice(1), "-p", "--no-session", "--model", String(config.summaryModel)];
	const text = await new Promise((resolve) => {
		let out = "";
		const child = spawn(command, args, { cwd: config.cwd, env: { ...env, ...config.env, AGENT_BOARD_WORKER: "" }, stdio: ["pipe", "pipe", "ignore"] });
		const timer = setTimeout(() => child.kill("SIGKILL"), config.summaryTimeoutMs ?? 30_000);
		child.stdin.on("error", () => undefined);
		child.stdin.end(prompt);
		child.stdout.setEncoding("utf8").on("data", (/** @type {string} */ c) => (out += c));
		child.on("error", () => resolve(""));
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve(code === 0 ? out.trim() : "");
		});
	});
	if (typeof text === "string" && text) {
		status.modelSummary = text.split("\n")[0]?.slice(0, 200);
		status.summary = summarize(status);
		writeStatus();
	}
}

// A bug in the runner must still leave a terminal state, a free slot and no process of the run.
process.on("uncaughtException", (error) => {
	try {
		for (const p of runProcesses(config.runId, { exclude: process.pid })) signalVerified(p.pid, p.start, "SIGKILL");
		if (!finished) {
			finished = true;
			finalize(status, { code: null, signal: null, spawnError: `runner error: ${error.message}`, now: Date.now() });
			writeStatus();
			releaseSlot(slotPath, config.runId);
		}
	} finally {
		process.exit(1);
	}
});

if (!existsSync(config.cwd)) void finish({ code: null, signal: null, spawnError: `working directory is gone: ${config.cwd}` });
// A stop that arrived while the run was queued ends it before any worker starts.
else if (stopWaiting(runDir)) serveInbox();
else {
	startWorker();
	// Messages (or a stop) that arrived while the run was queued go to the worker, which holds them until its agent starts.
	serveInbox();
}
