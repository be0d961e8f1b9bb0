// The link: the local owner of a run that runs on a target (docs/engine.md "The link"). Spawned by
// pumpQueue() like a runner, tagged with the run id, holding the run's slot; it writes runner.json,
// so every reader treats it as the run's runner. It launches the far run through the target's driver
// (driver.mjs), keeps the local run dir a mirror of the far one (link-mirror.mjs), forwards the local
// inbox (link-inbox.mjs), fetches the row's code back into its worktree, reconnects with backoff when
// the target cannot be reached (the run goes on there), and records the end, frees the slot and pumps.
// A link that dies is respawned by the next board read; it resumes where the local files stop.
// Usage: node target-link.mjs <run.json> <slot-file>
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { homedir } from "node:os";
import { writeJsonAtomic } from "../store/fs-util.mjs";
import { processStartTime, RUN_TAG } from "../store/proc.mjs";
import { pumpQueue } from "../life/queue.mjs";
import { recordStartFailure } from "../life/run-end.mjs";
import { isReasonCode } from "../life/reasons.mjs";
import { resetRelinks } from "../life/relink.mjs";
import { portableRun, readRunConfig } from "../life/run-config.mjs";
import { adoptSlot, releaseSlot } from "../life/slots.mjs";
import { initialStatus } from "../life/state-rules.mjs";
import { driverFor, targetError } from "../kinds/kinds.mjs";
import { git } from "../far/git-workspace.mjs";
import { layOver } from "./git-travel.mjs";
import { openInbox } from "./link-inbox.mjs";
import { openMirror } from "./link-mirror.mjs";

const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
/** Launch attempts on an unreachable target before the run fails (nothing started there yet). */
const LAUNCH_ATTEMPTS = 3;

/** @param {string} text */
const log = (text) => process.stderr.write(`${new Date().toISOString()} agent-board link: ${text}\n`);

const bornAt = Math.round(performance.timeOrigin);
const [configPath = "", slotPath = ""] = process.argv.slice(2);
if (!configPath || !slotPath) {
	process.stderr.write("usage: target-link.mjs <run.json> <slot-file>\n");
	process.exit(2);
}
const runDir = dirname(resolve(configPath));

/** @param {string} reason */
function refuse(reason) {
	log(reason);
	recordStartFailure(runDir, reason);
	releaseSlot(slotPath, basename(runDir));
	process.exit(1);
}

/** @type {import("../life/run-config.mjs").RunConfig} */
let config;
try {
	config = readRunConfig(configPath);
	if (resolve(config.runDir) !== runDir) throw new Error(`${configPath}: /runDir is not the directory of run.json`);
	const error = targetError(config.target, { named: true });
	if (error) throw new Error(`${configPath}: /target ${error}`);
	if (!config.repo || !config.worktree) throw new Error(`${configPath}: a target run needs /repo and /worktree`);
} catch (error) {
	refuse(error instanceof Error ? error.message : String(error));
	throw error;
}
const target = /** @type {import("./driver.mjs").TargetSnapshot} */ (config.target);
const worktree = String(config.worktree);
const selfStart = processStartTime(process.pid);
writeJsonAtomic(join(runDir, "runner.json"), { pid: process.pid, start: selfStart });
adoptSlot(slotPath, { pid: process.pid, start: selfStart, runId: config.runId, rowId: config.rowId });

/** link.json: whether the far run has started (a respawned link follows it instead of launching). */
const statePath = join(runDir, "link.json");
let started = false;
/** The end is being recorded: nothing else starts. */
let finishing = false;
/** How long a launch may go on after a stop came, before the link gives it up and stops what started. */
const STOP_DURING_LAUNCH_MS = 10_000;
/** @type {NodeJS.Timeout | undefined} */
let stopTimer;
/** The stream now (launch or follow). @type {import("./driver.mjs").FollowHandle | undefined} */
let current;
try {
	started = JSON.parse(readFileSync(statePath, "utf8")).started === true;
} catch {
	// A first start.
}

/** @returns {import("../life/state-rules.mjs").RunStatus} */
function localStatus() {
	try {
		return JSON.parse(readFileSync(join(runDir, "status.json"), "utf8"));
	} catch {
		return initialStatus(config.runId, config.rowId, config.createdAt);
	}
}

const mirror = openMirror({ storeDir: config.storeDir, rowId: config.rowId, runId: config.runId, runDir, sessionFile: config.sessionFile, target: target.name, status: localStatus(), worktree: String(config.worktree) });

if (!existsSync(worktree)) refuse(`the row's worktree is gone: ${worktree}`);

/** @type {import("./driver.mjs").LinkRun} */
const run = {
	target,
	storeDir: config.storeDir,
	rowId: config.rowId,
	runId: config.runId,
	runDir,
	sessionFile: config.sessionFile,
	repo: String(config.repo),
	worktree,
	base: git(worktree, ["rev-parse", "HEAD"]),
	subdir: relative(worktree, config.cwd),
	agentDir: config.agentDir ?? process.env.PI_CODING_AGENT_DIR ?? join(homedir(), ".pi", "agent"),
	// --env values come from the environment this link inherited (the board's), never from argv.
	forwarded: Object.fromEntries(target.env.flatMap((name) => (process.env[name] === undefined ? [] : [[name, String(process.env[name])]]))),
	// What the far side's run.json is made of: the part of this one that travels.
	config: { ...portableRun(config), repoKey: "", base: "", session: null },
};
run.config.base = run.base;
const driver = await driverFor(target, { storeDir: config.storeDir });
const inbox = openInbox(runDir, {
	onStop: () => {
		mirror.stopRequested();
		stopWhileLaunching();
	},
});

/** Fetch-back, one at a time; a request while one runs makes one more after it. */
const gitSync = (() => {
	/** @type {Promise<string | undefined> | undefined} */
	let running;
	let again = false;
	/** @returns {Promise<string | undefined>} why it failed */
	const once = async () => {
		try {
			await driver.fetchBack(run);
			layOver({ worktree, rowId: run.rowId });
			return undefined;
		} catch (error) {
			const why = error instanceof Error ? error.message : String(error);
			log(`fetch-back: ${why}`);
			return why;
		}
	};
	const loop = async () => {
		let failed;
		do {
			again = false;
			failed = await once();
		} while (again);
		running = undefined;
		return failed;
	};
	return {
		request() {
			if (running) again = true;
			else running = loop();
		},
		/**
		 * The last one, after the run ended: everything the target has is here before the end is recorded.
		 * @returns {Promise<string | undefined>} why the work could not be brought back (the row says so)
		 */
		async final() {
			if (running) await running;
			return once();
		},
	};
})();

let delay = FIRST_BACKOFF_MS;
let launches = 0;
/** A stop waiting when this link starts on a run that already started: ended there by a one-shot stop first. */
let stopFirst = started && inbox.stopWaiting();

function finish() {
	try {
		driver.finish?.(run);
	} catch (error) {
		log(`after the end: ${error instanceof Error ? error.message : String(error)}`);
	}
	inbox.finish();
	releaseSlot(slotPath, config.runId);
	const env = { ...process.env };
	delete env[RUN_TAG];
	pumpQueue(config.storeDir, { maxConcurrent: config.maxConcurrent, node: process.execPath, env });
	process.exit(0);
}

/** @param {Record<string, unknown>} final @param {{ seq: number, sessionBytes: number } | undefined} held */
async function ended(final, held) {
	finishing = true;
	const notFetched = await gitSync.final();
	mirror.end(final, { held, notFetched });
	finish();
}

/**
 * The run's files at the target are gone (its dir deleted there): nothing there can finish it. What the
 * workspace still has is fetched, then the run fails with the far side's words.
 * @param {string} reason @param {import("../life/reasons.mjs").ReasonCode} code
 */
async function lost(reason, code) {
	finishing = true;
	await gitSync.final();
	mirror.fail(reason, code);
	finish();
}

/**
 * A stop while the far run is being launched: the launch gets a moment to finish (then the stop goes
 * through the far inbox, as always); one that does not is given up, whatever started there is stopped,
 * and the run recorded stopped.
 */
function stopWhileLaunching() {
	if (started || finishing || stopTimer) return;
	stopTimer = setTimeout(() => {
		if (started || finishing) return;
		finishing = true;
		log(`stop: the launch on ${target.name} did not finish in ${STOP_DURING_LAUNCH_MS / 1000} s: given up`);
		current?.close();
		driver.stop(run).then(
			() => undefined,
			(error) => log(`stop on ${target.name}: ${error instanceof Error ? error.message : String(error)}`),
		).finally(() => {
			mirror.stopped();
			finish();
		});
	}, STOP_DURING_LAUNCH_MS);
}

function connect() {
	if (finishing) return;
	if (stopFirst) {
		driver.stop(run).then(
			() => {
				stopFirst = false;
				connect();
			},
			(error) => unreachable(error instanceof Error ? error.message : String(error)),
		);
		return;
	}
	/** @type {Record<string, unknown> | undefined} */
	let final;
	/** @type {{ seq: number, sessionBytes: number } | undefined} */
	let held;
	let lastError = "";
	/** @type {import("./driver.mjs").FollowHandle} */
	let handle;
	/** @type {import("./driver.mjs").FollowHandlers} */
	const on = {
		started() {
			started = true;
			writeJsonAtomic(statePath, { started: true, at: Date.now() });
			log(`the run started on ${target.name} (${Date.now() - bornAt} ms after this link)`);
		},
		frame(frame) {
			switch (frame.t) {
				case "hello":
					delay = FIRST_BACKOFF_MS;
					mirror.reachable();
					// This link reached the far run: a later death of it starts the count of new links afresh.
					resetRelinks(runDir);
					inbox.attach((message) => handle.deliver(message));
					return;
				case "status": {
					const error = mirror.setStatus(frame.status);
					if (error) log(error);
					return;
				}
				case "event": {
					const error = mirror.event(frame.seq, frame.line);
					if (error) log(error);
					return;
				}
				case "receipt": {
					const id = mirror.receipt(frame.receipt);
					if (id) inbox.served(id);
					return;
				}
				case "session":
					// A gap (should not happen): follow again from what the local file has.
					if (!mirror.session(frame.offset, frame.data, frame.reset)) handle.close();
					return;
				case "git":
					gitSync.request();
					return;
				case "end":
					final = frame.status;
					held = frame.held;
					return;
				case "flag":
					mirror.flag(frame);
					log(`${target.name}: ${frame.reason}`);
					return;
				case "error":
					lastError = frame.message;
					log(`${target.name}: ${frame.message}`);
					return;
				default:
					return;
			}
		},
		close(outcome) {
			inbox.detach();
			if (finishing) return;
			if (final) return void ended(final, held);
			const failure = outcome.failure;
			const reason = failure?.reason ?? (lastError || "the connection closed");
			if (failure?.kind === "gone") return void lost(reason, "far-run-gone");
			if (!started) return void launchFailed(failure?.kind ?? "protocol", reason, failure?.code);
			unreachable(reason);
		},
	};
	log(`${started ? "following" : "launching"} on ${target.name} (${Date.now() - bornAt} ms after this link)`);
	handle = started ? driver.follow(run, { seq: mirror.lastSeq, sessionBytes: mirror.sessionBytes() }, on) : driver.launch(run, on);
	current = handle;
	if (!started) launches += 1;
}

/** @param {string} reason */
function unreachable(reason) {
	mirror.unreachable(reason, Date.now());
	log(`${target.name} unreachable (retry in ${delay} ms): ${reason}`);
	setTimeout(connect, delay);
	delay = Math.min(delay * 2, MAX_BACKOFF_MS);
}

/** @param {string} kind @param {string} reason @param {string} [code] the far side's reason code */
function launchFailed(kind, reason, code) {
	// Unreachable before anything started there: a few tries, then the run fails (nothing to clean up).
	if (kind === "unreachable" && launches < LAUNCH_ATTEMPTS) {
		log(`launch on ${target.name} failed (retry in ${delay} ms): ${reason}`);
		setTimeout(connect, delay);
		delay = Math.min(delay * 2, MAX_BACKOFF_MS);
		return;
	}
	finishing = true;
	mirror.fail(`cannot start on ${target.name}: ${reason}`, code && isReasonCode(code) ? code : "start-failed");
	finish();
}

// SIGTERM (a stop that could not wait) ends only the link: the far run goes on, and the next board
// read starts a new link, which delivers the stop.
for (const signal of /** @type {const} */ (["SIGTERM", "SIGINT", "SIGHUP"])) process.on(signal, () => process.exit(0));
process.on("uncaughtException", (error) => {
	log(`link error: ${error.stack ?? error.message}`);
	process.exit(1);
});

if (!started && inbox.stopWaiting()) {
	// Stopped before it started anywhere: nothing to end at the target.
	finishing = true;
	mirror.stopped();
	finish();
} else {
	mirror.begin();
	connect();
}
