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

const mirror = openMirror({ storeDir: config.storeDir, rowId: config.rowId, runId: config.runId, runDir, sessionFile: config.sessionFile, target: target.name, status: localStatus() });
const inbox = openInbox(runDir, { onStop: () => mirror.stopRequested() });

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

/** Fetch-back, one at a time; a request while one runs makes one more after it. */
const gitSync = (() => {
	/** @type {Promise<void> | undefined} */
	let running;
	let again = false;
	const once = async () => {
		try {
			await driver.fetchBack(run);
			layOver({ worktree, rowId: run.rowId });
		} catch (error) {
			log(`fetch-back: ${error instanceof Error ? error.message : String(error)}`);
		}
	};
	const loop = async () => {
		do {
			again = false;
			await once();
		} while (again);
		running = undefined;
	};
	return {
		request() {
			if (running) again = true;
			else running = loop();
		},
		/** The last one, after the run ended: everything the target has is here before the end is recorded. */
		async final() {
			if (running) await running;
			await once();
		},
	};
})();

let delay = FIRST_BACKOFF_MS;
let launches = 0;
let finishing = false;
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

/** @param {Record<string, unknown>} final */
async function ended(final) {
	finishing = true;
	await gitSync.final();
	mirror.end(final);
	finish();
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
			if (final) return void ended(final);
			const reason = outcome.failure?.reason ?? (lastError || "the connection closed");
			if (!started) return void launchFailed(outcome.failure?.kind ?? "protocol", reason);
			unreachable(reason);
		},
	};
	log(`${started ? "following" : "launching"} on ${target.name} (${Date.now() - bornAt} ms after this link)`);
	handle = started ? driver.follow(run, { seq: mirror.lastSeq, sessionBytes: mirror.sessionBytes() }, on) : driver.launch(run, on);
	if (!started) launches += 1;
}

/** @param {string} reason */
function unreachable(reason) {
	mirror.unreachable(reason, Date.now());
	log(`${target.name} unreachable (retry in ${delay} ms): ${reason}`);
	setTimeout(connect, delay);
	delay = Math.min(delay * 2, MAX_BACKOFF_MS);
}

/** @param {string} kind @param {string} reason */
function launchFailed(kind, reason) {
	// Unreachable before anything started there: a few tries, then the run fails (nothing to clean up).
	if (kind === "unreachable" && launches < LAUNCH_ATTEMPTS) {
		log(`launch on ${target.name} failed (retry in ${delay} ms): ${reason}`);
		setTimeout(connect, delay);
		delay = Math.min(delay * 2, MAX_BACKOFF_MS);
		return;
	}
	finishing = true;
	mirror.fail(`cannot start on ${target.name}: ${reason}`);
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
