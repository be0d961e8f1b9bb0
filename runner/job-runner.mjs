// Detached monitor for one run: waits for a concurrency slot, spawns the pi worker, folds its JSON
// events into status.json and events.jsonl, and leaves a terminal state behind whatever happens.
// Usage: node job-runner.mjs <run-config.json>
import { spawn } from "node:child_process";
import { appendFileSync, chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { applyEvent, finalize, initialStatus, summarize } from "./state-rules.mjs";
import { compactEvent } from "./compact-event.mjs";
import { writeJsonAtomic, ensureDir, FILE_MODE } from "./fs-util.mjs";
import { killGroup, processStartTime } from "./proc.mjs";
import { releaseSlot, tryClaimSlot } from "./slots.mjs";

/**
 * @typedef {object} RunConfig
 * @property {string} rowId
 * @property {string} runId
 * @property {string} runDir
 * @property {string} slotsDir
 * @property {number} maxConcurrent
 * @property {string} sessionFile
 * @property {string} cwd
 * @property {string} prompt
 * @property {string[]} piCommand
 * @property {string} [model]
 * @property {string} [thinking]
 * @property {string} [extensionPath]
 * @property {Record<string, string>} env
 * @property {string} [summaryModel]
 * @property {number} [summaryTimeoutMs]
 * @property {number} [stopGraceMs]
 * @property {number} createdAt
 */

const STATUS_INTERVAL_MS = 250;
const SLOT_POLL_MS = 200;
const STDERR_TAIL = 4000;
const STDERR_LOG_CAP = 256 * 1024;

const configPath = process.argv[2];
if (!configPath) {
	process.stderr.write("usage: job-runner.mjs <run-config.json>\n");
	process.exit(2);
}
/** @type {RunConfig} */
const config = JSON.parse(readFileSync(configPath, "utf8"));
const paths = {
	status: join(config.runDir, "status.json"),
	events: join(config.runDir, "events.jsonl"),
	stderr: join(config.runDir, "stderr.log"),
	runner: join(config.runDir, "runner.json"),
	worker: join(config.runDir, "worker.json"),
	stop: join(config.runDir, "stop-requested"),
};
ensureDir(config.slotsDir);

const status = initialStatus(config.runId, config.rowId, config.createdAt);
const selfStart = processStartTime(process.pid);
writeJsonAtomic(paths.runner, { pid: process.pid, start: selfStart });

let lastWrite = 0;
/** @type {NodeJS.Timeout | undefined} */
let pendingWrite;
let lastWrittenState = status.state;
let stderrLogged = 0;
/** @type {string | undefined} */
let slot;
/** @type {import("node:child_process").ChildProcess | undefined} */
let worker;
let stopping = false;
let finished = false;

function writeStatus() {
	if (pendingWrite) clearTimeout(pendingWrite);
	pendingWrite = undefined;
	lastWrite = Date.now();
	lastWrittenState = status.state;
	writeJsonAtomic(paths.status, status);
}

/** State changes are written at once; everything else at most every STATUS_INTERVAL_MS. */
function scheduleStatus() {
	if (status.state !== lastWrittenState) return writeStatus();
	if (pendingWrite) return;
	const wait = Math.max(0, lastWrite + STATUS_INTERVAL_MS - Date.now());
	pendingWrite = setTimeout(writeStatus, wait);
}

writeStatus();

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitForSlot() {
	const owner = { pid: process.pid, start: selfStart, runId: config.runId };
	for (;;) {
		if (stopping || existsSync(paths.stop)) return false;
		slot = tryClaimSlot(config.slotsDir, Math.max(1, config.maxConcurrent), owner);
		if (slot) return true;
		await sleep(SLOT_POLL_MS + Math.floor(Math.random() * 50));
	}
}

/** @param {{ code: number | null, signal: string | null, spawnError?: string }} exit */
async function finish(exit) {
	if (finished) return;
	finished = true;
	finalize(status, { ...exit, stopped: stopping, now: Date.now() });
	protectSession();
	writeStatus();
	releaseSlot(slot, config.runId);
	if (config.summaryModel && !stopping && exit.spawnError === undefined) await modelSummary();
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

function stop() {
	if (stopping) return;
	stopping = true;
	status.stopRequested = true;
	if (!worker?.pid) {
		void finish({ code: null, signal: null });
		return;
	}
	const pid = worker.pid;
	killGroup(pid, "SIGTERM");
	setTimeout(() => killGroup(pid, "SIGKILL"), config.stopGraceMs ?? 3000).unref();
}

for (const signal of /** @type {const} */ (["SIGTERM", "SIGINT", "SIGHUP"])) process.on(signal, stop);

function workerArgs() {
	const args = [...config.piCommand.slice(1), "--mode", "json", "-p", "--session", config.sessionFile];
	if (config.model) args.push("--model", config.model);
	if (config.thinking) args.push("--thinking", config.thinking);
	if (config.extensionPath) args.push("-e", config.extensionPath);
	args.push("--", config.prompt);
	return args;
}

/** @param {string} chunk */
function onStderr(chunk) {
	status.stderrTail = ((status.stderrTail ?? "") + chunk).slice(-STDERR_TAIL);
	if (stderrLogged < STDERR_LOG_CAP) {
		const part = chunk.slice(0, STDERR_LOG_CAP - stderrLogged);
		stderrLogged += part.length;
		appendFileSync(paths.stderr, part, { mode: FILE_MODE });
	}
	scheduleStatus();
}

function startWorker() {
	const command = config.piCommand[0] ?? "pi";
	const child = spawn(command, workerArgs(), {
		cwd: config.cwd,
		env: { ...process.env, ...config.env },
		detached: true,
		stdio: ["ignore", "pipe", "pipe"],
	});
	worker = child;
	if (child.pid) writeJsonAtomic(paths.worker, { pid: child.pid, start: processStartTime(child.pid) });
	let buffer = "";
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
		appendFileSync(paths.events, `${JSON.stringify(compactEvent(event, seq, now))}\n`, { mode: FILE_MODE });
		applyEvent(status, event, now);
		if (event.type === "message_end") protectSession();
	};
	child.stdout.setEncoding("utf8").on("data", (/** @type {string} */ chunk) => {
		buffer += chunk;
		let index;
		while ((index = buffer.indexOf("\n")) >= 0) {
			onLine(buffer.slice(0, index));
			buffer = buffer.slice(index + 1);
		}
		scheduleStatus();
	});
	child.stderr.setEncoding("utf8").on("data", onStderr);
	child.on("error", (error) => {
		const code = /** @type {NodeJS.ErrnoException} */ (error).code;
		const reason = code === "ENOENT" ? `pi not found: ${command}` : `could not start pi (${command}): ${error.message}`;
		void finish({ code: null, signal: null, spawnError: reason });
	});
	child.on("close", (code, signal) => {
		if (buffer) onLine(buffer);
		buffer = "";
		void finish({ code, signal });
	});
}

async function modelSummary() {
	const command = config.piCommand[0] ?? "pi";
	const prompt = `Summarize in one short sentence (max 15 words) what this agent run achieved or is blocked on:\n\n${status.latestAssistant ?? status.error ?? status.state}`;
	const args = [...config.piCommand.slice(1), "-p", "--no-session", "--model", String(config.summaryModel), "--", prompt];
	const text = await new Promise((resolve) => {
		let out = "";
		const child = spawn(command, args, { cwd: config.cwd, env: { ...process.env, ...config.env }, stdio: ["ignore", "pipe", "ignore"] });
		const timer = setTimeout(() => child.kill("SIGKILL"), config.summaryTimeoutMs ?? 30_000);
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

async function main() {
	if (existsSync(paths.stop)) stopping = true;
	const claimed = await waitForSlot();
	if (!claimed || stopping || existsSync(paths.stop)) {
		stopping = true;
		return finish({ code: null, signal: null });
	}
	if (!existsSync(config.cwd)) return finish({ code: null, signal: null, spawnError: `working directory is gone: ${config.cwd}` });
	startWorker();
}

// The runner must never outlive a worker it cannot see; keep the worker's liveness honest.
process.on("exit", () => {
	if (worker?.pid && worker.exitCode === null && worker.signalCode === null) killGroup(worker.pid, "SIGKILL");
});
// A bug in the runner must still leave a terminal state and no orphaned worker.
process.on("uncaughtException", (error) => {
	try {
		if (worker?.pid) killGroup(worker.pid, "SIGKILL");
		if (!finished) {
			finished = true;
			finalize(status, { code: null, signal: null, spawnError: `runner error: ${error.message}`, now: Date.now() });
			writeStatus();
			releaseSlot(slot, config.runId);
		}
	} finally {
		process.exit(1);
	}
});
void main();
