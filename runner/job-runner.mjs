// Detached owner of one run: spawned by pumpQueue() once the run holds a slot. It spawns the pi worker,
// is the only writer of the run's files (status.json, events.jsonl, receipts/, logs), serves the run's
// control channel (inbox/ on disk, fd 3 to the worker), and leaves a terminal state, a free slot and no
// process of the run behind, whatever happens. Usage: node job-runner.mjs <run.json> <slot-file>
import { spawn } from "node:child_process";
import { existsSync, watch } from "node:fs";
import { join } from "node:path";
import { addReceipt, applyEvent, finalize, initialStatus, summarize, visibleKey } from "./life/state-rules.mjs";
import { EventLog } from "./event-log.mjs";
import { WordsWriter } from "./live-words.mjs";
import { modelSummary } from "./model-summary.mjs";
import { protectSessionFile, runPlaceProblem } from "./store/dir-guard.mjs";
import { DISK_FULL_BYTES, diskSpace, ensureDir } from "./store/fs-util.mjs";
import { claimMessages, inboxDir, preview, rejectionReceipt, stopWaiting } from "./life/inbox.mjs";
import { JsonLines } from "./json-lines.mjs";
import {
	descendants,
	endRunProcesses,
	processStartTime,
	RUN_TAG,
	runProcesses,
	runTag,
	signalVerified,
} from "./store/proc.mjs";
import { ensureKeeper } from "./keeper/ensure-keeper.mjs";
import { runNotices } from "./notify/run-notices.mjs";
import { readPolicy } from "./life/policy.mjs";
import { pumpQueue } from "./life/queue.mjs";
import { isDiskError, RunFiles } from "./run-files.mjs";
import { adoptSlot, releaseSlot } from "./life/slots.mjs";
import { openWorkerLink } from "./worker-link.mjs";
import { readConfig, workerArgs } from "./runner-config.mjs";
import { makeRunWorktree, runCwdIn } from "./life/row-worktree.mjs";
import { MAX_BY_CHARS } from "./protocol.mjs";
import { oomWatch, outsideSignalReason } from "./worker-end.mjs";
import { runHelpers } from "./run-helpers.mjs"; // budgets and the supervisor, off unless the user turned them on

// AGENT_BOARD_STATUS_MS: tests hold status.json still to see that streamed words take their own path.
const STATUS_INTERVAL_MS = Number(process.env.AGENT_BOARD_STATUS_MS) || 250;
/** A write that failed (a full disk) is tried again this often. */
const RETRY_MS = 1000;
/** How long a finished run waits for space to record its end before its runner gives up. */
const END_WAIT_MS = 60 * 60 * 1000;
const INBOX_POLL_MS = 1000;
const STDERR_TAIL = 4000;
const STDERR_LOG_CAP = 256 * 1024;

const [configPath, slotPath] = process.argv.slice(2);
if (!configPath || !slotPath) {
	process.stderr.write("usage: job-runner.mjs <run.json> <slot-file>\n");
	process.exit(2);
}
const config = readConfig(configPath, slotPath);
const runDir = config.runDir;
/** Where the worker works (read when the run begins, after its worktree is made). */
let workCwd = config.cwd;
/** What every process of this run carries (a far run's differs from its link's: proc.mjs runTag). */
const tag = runTag(config.runId, config.layout);
const files = new RunFiles({ runDir, storeDir: config.storeDir, rowId: config.rowId }, (problem) => refuseRun(problem));
const events = new EventLog((line) => files.appendEvent(line));
const words = new WordsWriter({ runDir, storeDir: config.storeDir, rowId: config.rowId });
const selfStart = processStartTime(process.pid);
files.writeRecord(join(runDir, "runner.json"), { pid: process.pid, start: selfStart });
try {
	adoptSlot(slotPath, { pid: process.pid, start: selfStart, runId: config.runId });
} catch {
	// The pumper's claim stands; the slot stays taken while any process of the run lives.
}

const status = initialStatus(config.runId, config.rowId, config.createdAt);
// What the notifiers hear of this run: a question, a budget pause, its end (runner/notify/run-notices.mjs).
const notices = runNotices(config, () => Boolean(readPolicy(config.storeDir).policy.supervisor?.model));
status.state = "working";
status.startedAt = Date.now();
status.summary = "Starting pi";

let [lastWrite, lastKey, lastState] = [0, "", ""];
/** @type {NodeJS.Timeout | undefined} */
let pendingWrite;
// How much stderr is in stderr.log; its start, where the worker's error is (the status keeps the tail).
let [stderrLogged, stderrHead] = [0, ""];
/** @type {import("node:child_process").ChildProcess | undefined} */
let worker;
/** @type {string | undefined} */
let workerStart;
/** @type {ReturnType<typeof openWorkerLink> | undefined} */
let link;
let [stopping, finished, agentStarted, workerClosed] = [false, false, false, false];
/** The worker waits for space on the store's disk before it starts (startWhenSpace). */
let holding = false;
/** The worker role answered on fd 3: the prompt goes out only after this. */
let workerReady = false;
/** The worker's process tree when a stop began: what the run's tag may miss. @type {{ pid: number, start: string }[]} */
let stopTree = [];
/** Why the runner ended the worker itself (kept over "worker killed by SIGKILL"), and its code. @type {string | undefined} */
let failure;
/** @type {import("./life/reasons.mjs").ReasonCode | undefined} */
let failureCode;
/** The OOM killer's count when the worker started (worker-end.mjs). @type {ReturnType<typeof oomWatch> | undefined} */
let oom;
/** The run's directory is gone: nothing can be recorded, the runner only ends what runs. */
let dirLost = false;
/** Forwarded, waiting for the worker's receipt (the worker holds them until its agent starts). @type {Map<string, import("./life/inbox.mjs").InboxMessage>} */
const forwarded = new Map();

/**
 * A full or failing disk must not kill the run: a failed write is retried every RETRY_MS (and with the
 * next change), and what waits for space goes out with the first write that succeeds.
 */
function writeStatus() {
	if (pendingWrite) clearTimeout(pendingWrite);
	pendingWrite = undefined;
	lastWrite = Date.now();
	if (files.droppedEvents > 0) status.droppedEvents = files.droppedEvents;
	if (!files.writeStatus(status)) {
		if (files.dirGone()) lostDir();
		else pendingWrite = setTimeout(writeStatus, RETRY_MS);
		return false;
	}
	lastKey = visibleKey(status);
	lastState = status.state;
	notices.observe(status);
	return true;
}

/** Writes only what a reader could see, state changes at once, the rest at most every STATUS_INTERVAL_MS. */
function scheduleStatus() {
	if (status.state !== lastState && !files.problem) return writeStatus();
	if (pendingWrite) return;
	if (visibleKey(status) === lastKey) return;
	const wait = Math.max(0, lastWrite + STATUS_INTERVAL_MS - Date.now());
	pendingWrite = setTimeout(() => {
		if (visibleKey(status) === lastKey) pendingWrite = undefined;
		else writeStatus();
	}, wait);
}

writeStatus();
const helpers = runHelpers(config, status, {
	send: (m) => link?.send(m),
	changed: () => scheduleStatus(),
	flush: () => writeStatus(),
	event: (e) => {
		events.add(e, Date.now());
		if (e.type !== "supervisor") return;
		if (e.decision === "answered")
			notices.answered(String(e.question ?? ""), String(e.answer ?? ""), String(e.by ?? e.rule ?? ""));
		// answered-first: a person answered; any other line (asked-you, a failure) leaves it to them.
		else if (e.decision !== "answered-first") notices.leftToPerson(helpers.supervisor.asking?.question);
	},
	over: () => finished || stopping,
});

/** @param {import("../src/board/engine/types.ts").Receipt} receipt */
function record(receipt) {
	files.writeReceipt(receipt);
	addReceipt(status, receipt);
	scheduleStatus();
}

/** @param {import("./life/inbox.mjs").InboxMessage} message @param {import("./protocol.mjs").DeliveryKind} [as] */
function delivered(message, as) {
	record({ id: message.id, status: "delivered", as, at: Date.now(), preview: preview(message.text ?? message.kind) });
}

/** @param {import("./life/inbox.mjs").InboxMessage} message @param {import("./life/reasons.mjs").ReceiptCode} code */
function rejected(message, code) {
	record(rejectionReceipt(message.id, code, Date.now(), preview(message.text ?? message.kind)));
}

/** @param {import("./life/inbox.mjs").InboxMessage} message */
function forward(message) {
	if (
		workerClosed ||
		finished ||
		!link?.send({
			type: "message",
			id: message.id,
			text: message.text ?? "",
			deliverAs: message.deliverAs ?? "steer",
			...(message.answers ? { answers: message.answers } : {}),
			...(message.from === "supervisor" && message.by ? { by: message.by.slice(0, MAX_BY_CHARS) } : {}),
		})
	) {
		rejected(message, "run-ended");
		return;
	}
	forwarded.set(message.id, message);
}

function serveInbox() {
	if (files.dirGone()) return lostDir();
	if (holding && !stopWaiting(runDir)) return;
	for (const message of claimMessages(runDir)) {
		if ("rejected" in message) record(rejectionReceipt(message.id, message.rejected, Date.now(), "", message.detail));
		else if (message.kind === "stop" && !finished) {
			delivered(message);
			stop();
		} else if (message.kind === "budget") helpers.verdict(message);
		else if (finished || workerClosed || stopping) rejected(message, "run-ended");
		else forward(message);
	}
	scheduleStatus();
}

/** The inbox is watched when it can be (a full disk may refuse to create it); the poll serves it anyway. */
function watchInbox() {
	try {
		ensureDir(inboxDir(runDir));
		const watcher = watch(inboxDir(runDir), () => serveInbox());
		watcher.on("error", () => undefined);
		return watcher;
	} catch (error) {
		files.failed(inboxDir(runDir), error);
		return undefined;
	}
}
const inboxWatcher = watchInbox();
const inboxPoll = setInterval(() => {
	serveInbox();
	helpers.gate.poll();
}, INBOX_POLL_MS);

/** @param {{ code: number | null, signal: string | null, spawnError?: string }} exit */
async function finish(exit) {
	if (finished) return;
	finished = true;
	inboxWatcher?.close();
	clearInterval(inboxPoll);
	link?.close();
	words.close();
	protectSession();
	if (!failure && exit.signal === "SIGKILL") failure = oom?.killed();
	if (failure && !failureCode && exit.signal === "SIGKILL" && failure.startsWith("out of memory"))
		failureCode = "out-of-memory";
	finalize(status, {
		...exit,
		spawnError: exit.spawnError ?? failure,
		stopped: stopping && !failure,
		now: Date.now(),
		stderrHead,
	});
	if (status.state === "failed" && failureCode && !exit.spawnError) status.errorCode = failureCode;
	if (status.state === "failed" && (files.diskFailed || /ENOSPC|no space left/i.test(status.error ?? "")))
		status.errorCode = "disk-full";
	if (dirLost) {
		// Nowhere to record anything: end what runs, free the slot and go (a reader, or the far follow, says why).
		await endRunProcesses(tag, { exclude: process.pid, graceMs: 200 });
		releaseSlot(slotPath, config.runId);
		process.exit(1);
	}
	writeStatus();
	// pi starts tools in their own process groups: end whatever of this run is still running.
	await endRunProcesses(tag, { exclude: process.pid, graceMs: 500 });
	for (const p of stopTree) signalVerified(p.pid, p.start, "SIGKILL");
	// Before its agent started the worker delivers nothing: an unanswered message certainly missed the run.
	for (const message of forwarded.values()) rejected(message, agentStarted ? "unconfirmed" : "run-ended");
	forwarded.clear();
	serveInbox();
	// The end of a run must be recorded by its runner: on a full disk it waits for space (the slot stays
	// taken, so nothing else starts on that disk meanwhile), and gives up only after END_WAIT_MS.
	events.flush();
	for (const giveUp = Date.now() + END_WAIT_MS; !writeStatus() && Date.now() < giveUp; )
		await new Promise((r) => setTimeout(r, RETRY_MS));
	if (pendingWrite) clearTimeout(pendingWrite);
	files.close();
	releaseSlot(slotPath, config.runId);
	const env = { ...process.env };
	delete env[RUN_TAG];
	try {
		pumpQueue(config.storeDir, { maxConcurrent: config.maxConcurrent, node: process.execPath, env });
		// Runs left in the queue or running move with no board open (docs/engine.md, "The keeper"); a far
		// run's store is its link's to keep.
		if (!config.layout || config.layout === "store")
			ensureKeeper(config.storeDir, { maxConcurrent: config.maxConcurrent, node: process.execPath, env });
	} catch (error) {
		files.log(`cannot pump the queue: ${error instanceof Error ? error.message : String(error)}`);
	}
	const summary =
		config.summaryModel && !stopping && exit.spawnError === undefined ? await modelSummary(config, status, env) : "";
	if (summary) {
		status.modelSummary = summary;
		status.summary = summarize(status);
		writeStatus();
	}
	process.exit(0);
}

/**
 * pi creates the session file with the default umask; the store keeps files private. Never through a
 * symlink: a session file swapped for a link (or a hard link) mid-run ends the run before pi writes
 * through it again.
 */
function protectSession() {
	const problem = protectSessionFile(config.sessionFile);
	if (!problem || finished) return;
	failure ??= problem;
	if (worker?.pid) signalVerified(worker.pid, workerStart, "SIGKILL");
}

/**
 * A file of the run planted in place of its own (a symlink as events.jsonl): nothing goes through it, and
 * the run ends naming it rather than going on with its record somewhere else.
 * @param {string} problem
 */
function refuseRun(problem) {
	if (finished) return;
	failure ??= problem;
	if (worker?.pid) signalVerified(worker.pid, workerStart, "SIGKILL");
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
	// Before anything ends: a tool's child without our tag (env -i) in its own session (setsid) is
	// found by its parent links only while they lead back to the worker.
	stopTree = descendants(worker.pid);
	link?.send({ type: "abort" });
	const pid = worker.pid;
	const grace = config.stopGraceMs ?? 3000;
	setTimeout(() => signalVerified(pid, workerStart, "SIGTERM"), grace).unref();
	setTimeout(() => void endRunProcesses(tag, { exclude: process.pid }), grace * 2).unref();
}

/**
 * A stop from the board comes through the inbox (a one-shot stop drops its message before it signals);
 * a signal without one ended the run from outside, and the row says so.
 * @param {NodeJS.Signals} signal
 */
function onSignal(signal) {
	if (stopping || finished) return;
	if (stopWaiting(runDir)) return serveInbox();
	failure ??= outsideSignalReason(signal, config.layout);
	failureCode ??= "killed-outside";
	stop();
}

/** The run's directory is gone: the worker and everything of the run end now. */
function lostDir() {
	if (dirLost) return;
	dirLost = true;
	files.log(`the run's directory is gone: ${runDir}; ending the run (nothing can be recorded there)`);
	failure ??= `the run's directory is gone: ${runDir}`;
	if (!worker?.pid || workerClosed) return void finish({ code: null, signal: null });
	signalVerified(worker.pid, workerStart, "SIGKILL");
}

for (const signal of /** @type {const} */ (["SIGTERM", "SIGINT", "SIGHUP"])) process.on(signal, () => onSignal(signal));

/** @param {string} chunk */
function onStderr(chunk) {
	status.stderrTail = ((status.stderrTail ?? "") + chunk).slice(-STDERR_TAIL);
	if (stderrHead.length < STDERR_TAIL) stderrHead += chunk.slice(0, STDERR_TAIL - stderrHead.length);
	if (stderrLogged < STDERR_LOG_CAP) {
		const part = chunk.slice(0, STDERR_LOG_CAP - stderrLogged);
		stderrLogged += part.length;
		files.appendStderr(part);
	}
	scheduleStatus();
}

/** @param {Record<string, unknown>} event */
function onWorkerEvent(event) {
	if (event.type === "agent_start") agentStarted = true;
	if (event.type === "message_end") {
		protectSession();
		const message = /** @type {{ role?: string }} */ (event.message ?? {});
		// The prompt is sent only after the worker role said ready: a user message before that is the
		// placeholder, read by a pi without the role. Fail loudly rather than let the model guess.
		if (message.role === "user" && !workerReady) {
			failure = "the worker did not load the agent-board extension, so the prompt could not be delivered";
			if (worker?.pid) signalVerified(worker.pid, workerStart, "SIGKILL");
		}
	}
}

/**
 * A tool call the worker's action gate holds is an ask_user question to the run's status, its events
 * and the supervisor (which never answers it: it names a command outside the safe set).
 * @param {import("./protocol.mjs").Hold} hold @returns {Record<string, unknown>}
 */
function heldAsQuestion(hold) {
	const call = { toolName: "ask_user", toolCallId: hold.id };
	if (hold.type === "hold")
		return { type: "tool_execution_start", ...call, args: { question: hold.question, options: ["yes", "no"] } };
	const answered = hold.answer !== undefined;
	return {
		type: "tool_execution_end",
		...call,
		result: {
			content: [
				{
					type: "text",
					text: answered ? `The user answered: ${hold.answer}` : "Not answered: the command was blocked.",
				},
			],
			details: { answered, ...(answered ? { answer: hold.answer } : {}) },
		},
	};
}

function startWorker() {
	const command = config.piCommand[0] ?? "pi";
	oom = oomWatch();
	const child = spawn(command, workerArgs(config), {
		cwd: workCwd,
		env: { ...process.env, ...config.env, AGENT_BOARD_CONTROL_FD: "3", [RUN_TAG]: tag },
		stdio: ["ignore", "pipe", "pipe", "pipe"],
	});
	worker = child;
	const stdout = /** @type {import("node:stream").Readable} */ (child.stdout);
	const stderr = /** @type {import("node:stream").Readable} */ (child.stderr);
	if (child.pid) {
		workerStart = processStartTime(child.pid);
		files.writeRecord(join(runDir, "worker.json"), { pid: child.pid, start: workerStart });
	}
	link = openWorkerLink(/** @type {import("node:stream").Duplex | null} */ (child.stdio[3]), (report) => {
		if (report.type === "closed") {
			workerClosed = true;
			return;
		}
		if (report.type === "ready") {
			if (!workerReady)
				link?.send({
					type: "prompt",
					text: config.prompt,
					holdTurns: true,
					...(config.systemPrompt ? { system: config.systemPrompt } : {}),
				});
			workerReady = true;
			return;
		}
		if (report.type === "turn-end") return helpers.gate.onTurnEnd(report);
		if (report.type === "hold" || report.type === "hold-end") return onEvent(heldAsQuestion(report));
		const message = forwarded.get(report.id);
		if (!message) return;
		forwarded.delete(report.id);
		if (report.status === "delivered") delivered(message, report.as);
		else rejected(message, report.code ?? "run-ended");
	});
	const lines = new JsonLines();
	/** @param {Record<string, unknown> | undefined} event */
	const onEvent = (event) => {
		if (!event) return;
		const now = Date.now();
		events.add(event, now);
		applyEvent(status, event, now);
		words.observe(event);
		onWorkerEvent(event);
		helpers.supervisor.onEvent(event);
	};
	const stdoutDone = new Promise((resolve) => {
		stdout.setEncoding("utf8").on("data", (/** @type {string} */ chunk) => {
			for (const event of lines.push(chunk)) onEvent(event);
			scheduleStatus();
		});
		stdout.on("end", resolve);
		stdout.on("error", resolve);
	});
	stderr.setEncoding("utf8").on("data", onStderr);
	child.on("error", (error) => {
		const code = /** @type {NodeJS.ErrnoException} */ (error).code;
		const reason =
			code === "ENOENT" ? `pi not found: ${command}` : `could not start pi (${command}): ${error.message}`;
		void finish({ code: null, signal: null, spawnError: reason });
	});
	// "exit", not "close": pi's tools may inherit fd 3 and keep it open after pi is gone.
	child.on("exit", (code, signal) => {
		const flushed = Promise.race([stdoutDone, new Promise((r) => setTimeout(r, 2000))]);
		void flushed.then(() => {
			onEvent(lines.flush());
			void finish({ code, signal });
		});
	});
}

// A bug in the runner must still leave a terminal state, a free slot and no process of the run.
// runner.log, its stderr, is on the store's disk: a write there that fails is dropped, never fatal.
process.stderr.on("error", () => undefined);
process.on("uncaughtException", (error) => {
	// A write nothing guarded failed on a full or failing disk: never a reason to end the run.
	if (isDiskError(error)) {
		files.failed("the store", error);
		return;
	}
	try {
		for (const p of runProcesses(tag, { exclude: process.pid })) signalVerified(p.pid, p.start, "SIGKILL");
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

const refused = runPlaceProblem(runDir, config.sessionFile) ?? files.openAll();
if (refused) void finish({ code: null, signal: null, spawnError: refused });
// The run's first step: its row's worktree, when this run is the one to make it.
else
	makeRunWorktree(config).then(begin, (error) =>
		finish({ code: null, signal: null, spawnError: error instanceof Error ? error.message : String(error) }),
	);

function begin() {
	workCwd = runCwdIn(config);
	if (!existsSync(workCwd))
		void finish({ code: null, signal: null, spawnError: `working directory is gone: ${workCwd}` });
	// A stop that arrived while the run was queued (or its worktree was being made) ends it before any worker starts.
	else if (stopWaiting(runDir)) serveInbox();
	else startWhenSpace();
}

/**
 * pi writes as it starts (jiti's compiled extension on a cold cache under the store's tmp/, then its
 * session file): on a store's disk with less room than a run needs to record itself, the worker is not
 * started until there is. Meanwhile the inbox waits, but for a stop, which ends the run with no worker.
 */
function startWhenSpace() {
	if (finished || stopping) return;
	const space = diskSpace(config.storeDir);
	if (space !== undefined && space < DISK_FULL_BYTES) {
		holding = true;
		status.summary = "Disk full: waiting for space";
		scheduleStatus();
		setTimeout(startWhenSpace, RETRY_MS);
		return;
	}
	holding = false;
	startWorker();
	// Messages (or a stop) that arrived while the run was queued go to the worker, which holds them until its agent starts.
	serveInbox();
}
