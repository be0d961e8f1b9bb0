// A target's link: the one local process that owns every running row of one target (docs/engine-targets.md,
// "One link per target"). Started by the first hand-over (life/target-link-owner.mjs: the queue's claim,
// or a relink), it takes over each run handed to it (runs/ in its link dir, watched), names itself in the
// run's runner.json and its slot, and drives it (run-link.mjs) through the target's one driver, whose
// channel carries every run's frames. It writes what it learns of the target (health.json: reachable,
// the far side's load) for a pool's placement. With nothing left to own it leaves, under the link lock.
// Killed, it is started again by the next board read (supervise's relink), and the new link resumes
// every run where the local files stop.
// Usage: node target-link.mjs <store>/targets/<target>/link
import { existsSync, watch } from "node:fs";
import { appendNoFollow } from "../store/append-file.mjs";
import { basename, dirname, join, resolve } from "node:path";
import { kindOf } from "../kinds/kinds.mjs";
import { ensureKeeper } from "../keeper/ensure-keeper.mjs";
import { pumpQueue } from "../life/queue.mjs";
import { readRunConfig } from "../life/run-config.mjs";
import { adoptSlot, releaseSlot, slotOfRun, slotsOf } from "../life/slots.mjs";
import { dropHandedRun, handedRuns, leaveIfIdle, linkPaths } from "../life/target-link-owner.mjs";
import { writeHealth } from "../life/target-health.mjs";
import { TARGET_NAME } from "../life/vocabulary.mjs";
import { writeJsonAtomic } from "../store/fs-util.mjs";
import { processStartTime, RUN_TAG } from "../store/proc.mjs";
import { readProcessFile, safeStatus } from "../store/safe-read.mjs";
import { runDirOf } from "../store/store-layout.mjs";
import { openRunLink } from "./run-link.mjs";

/** Nothing to own for this long: the link leaves. */
const IDLE_MS = 5000;
/** A safety pass over runs/ (the watch covers the rest). */
const SCAN_MS = 1000;
/** How long a new link waits for its record (the hand-over writes it just after the spawn). */
const RECORD_WAIT_MS = 10_000;

const linkArg = resolve(process.argv[2] ?? "");
const targetName = basename(dirname(linkArg));
const storeDir = dirname(dirname(dirname(linkArg)));
if (
	!process.argv[2] ||
	basename(linkArg) !== "link" ||
	basename(dirname(dirname(linkArg))) !== "targets" ||
	!TARGET_NAME.test(targetName)
) {
	process.stderr.write("usage: target-link.mjs <store>/targets/<target>/link\n");
	process.exit(2);
}

/** @param {string} text */
const log = (text) => process.stderr.write(`${new Date().toISOString()} agent-board link ${targetName}: ${text}\n`);
const self = { pid: process.pid, start: String(processStartTime(process.pid) ?? "") };
const paths = linkPaths(storeDir, targetName);

/** Whether the target's link record still names this process. */
function ownRecord() {
	const record = readProcessFile(paths.record);
	return !!record && record.pid === self.pid && String(record.start) === self.start;
}

// The hand-over writes the record right after the spawn: wait for it; another live link means this one goes.
for (const until = Date.now() + RECORD_WAIT_MS; !ownRecord(); ) {
	if (Date.now() > until) {
		log("not the target's link (another one runs): leaving");
		process.exit(0);
	}
	Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
}

/** @type {Map<string, Promise<import("./driver.mjs").TargetDriver>>} one driver per target snapshot (an edit while runs go on makes a second) */
const drivers = new Map();
/** @type {import("./driver.mjs").TargetHooks} */
const hooks = {
	onOpen: () => health({ reachable: true }),
	onDrop: (failure) => health({ reachable: false, reason: failure.reason }),
	onLoad: ({ load, cpus }) => health({ load, cpus, loadAt: Date.now() }),
};
/** @type {import("../life/target-health.mjs").TargetHealth} */
let known = { at: Date.now(), reachable: true };
/** What the driver learnt of the target, kept for placement and the targets view. @param {Partial<import("../life/target-health.mjs").TargetHealth>} change */
function health(change) {
	const now = Date.now();
	const reachable = change.reachable ?? known.reachable;
	/** @type {import("../life/target-health.mjs").TargetHealth} */
	const next = { at: now, reachable };
	for (const key of /** @type {const} */ (["load", "cpus", "loadAt"])) {
		const value = change[key] ?? known[key];
		if (value !== undefined) next[key] = value;
	}
	// A run that could not start there (it answered, but refused) until one starts there.
	const failing = "failing" in change ? change.failing : known.failing;
	if (failing) Object.assign(next, { failing, failingAt: change.failingAt ?? known.failingAt ?? now });
	if (!reachable) {
		next.since = known.reachable ? now : (known.since ?? now);
		const reason = change.reason ?? known.reason;
		if (reason) next.reason = reason;
	}
	known = next;
	try {
		writeHealth(storeDir, targetName, known);
	} catch (error) {
		log(`cannot write its health: ${error instanceof Error ? error.message : String(error)}`);
	}
}

/** @param {import("./driver.mjs").TargetSnapshot} target */
function driverFor(target) {
	const key = JSON.stringify(target);
	let driver = drivers.get(key);
	if (!driver) {
		driver = kindOf(target).driver(target, { storeDir, hooks });
		drivers.set(key, driver);
	}
	return driver;
}

/** @type {Map<string, { release: () => void }>} */
const owned = new Map();
let leaving = false;
let idleSince = Date.now();

/**
 * @param {import("../life/target-link-owner.mjs").HandedRun} handed @param {number} maxConcurrent
 * @param {{ requeued?: boolean }} [how] back in its pool's queue: its pool slot went then (pool-return.mjs)
 */
function finished(handed, maxConcurrent, how = {}) {
	owned.delete(handed.runId);
	releaseSlot(handed.slot, handed.runId);
	if (handed.pool && !how.requeued)
		releaseSlot(slotOfRun(slotsOf(storeDir, handed.pool).dir, handed.runId), handed.runId);
	dropHandedRun(storeDir, targetName, handed.runId);
	if (owned.size === 0) idleSince = Date.now();
	const env = { ...process.env };
	delete env[RUN_TAG];
	try {
		pumpQueue(storeDir, { maxConcurrent, node: process.execPath, env });
		ensureKeeper(storeDir, { maxConcurrent, node: process.execPath, env });
	} catch (error) {
		log(`pump: ${error instanceof Error ? error.message : String(error)}`);
	}
}

/** @param {import("../life/target-link-owner.mjs").HandedRun} handed */
function adopt(handed) {
	const runDir = runDirOf(storeDir, handed.rowId, handed.runId);
	const status = safeStatus(runDir);
	/** @param {string} text */
	const runLog = (text) => {
		log(text);
		try {
			appendNoFollow(join(runDir, "runner.log"), `${new Date().toISOString()} agent-board link: ${text}\n`);
		} catch {
			// The link's own log has it.
		}
	};
	let maxConcurrent = 4;
	try {
		maxConcurrent = readRunConfig(join(runDir, "run.json")).maxConcurrent;
	} catch {
		// run-link says what is wrong with it.
	}
	if (!existsSync(runDir) || (status && typeof status.endedAt === "number")) {
		// Its end is recorded (a link that died just after it): only the hand-over is left to clear.
		finished(handed, maxConcurrent);
		return;
	}
	writeJsonAtomic(join(runDir, "runner.json"), self);
	adoptSlot(handed.slot, { pid: self.pid, start: self.start, runId: handed.runId, rowId: handed.rowId });
	/** @type {{ release: () => void }} */
	const entry = { release: () => undefined };
	owned.set(handed.runId, entry);
	/** @param {{ started?: boolean, failed?: string }} news */
	const onTarget = (news) => {
		if (news.started && known.failing) health({ failing: undefined });
		if (news.failed) health({ failing: news.failed, failingAt: Date.now() });
	};
	void openRunLink({
		runDir,
		driverFor,
		log: runLog,
		onTarget,
		onDone: (how) => finished(handed, maxConcurrent, how),
	}).then(
		(handle) => {
			if (owned.get(handed.runId) === entry) entry.release = handle.release;
		},
		(error) => {
			runLog(`link error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
			owned.delete(handed.runId);
		},
	);
}

function scan() {
	if (leaving) return;
	if (!ownRecord()) {
		// Another link holds the target now (this one looked dead): it owns the runs.
		log("the target has another link now: leaving its runs to it");
		return leave();
	}
	for (const handed of handedRuns(storeDir, targetName)) if (!owned.has(handed.runId)) adopt(handed);
	if (owned.size === 0 && Date.now() - idleSince >= IDLE_MS && leaveIfIdle(storeDir, targetName, self)) leave();
}

function leave() {
	leaving = true;
	for (const entry of owned.values()) entry.release();
	for (const driver of drivers.values())
		void driver.then(
			(d) => d.close?.(),
			() => undefined,
		);
	// The channel's ssh client goes with its stdin; nothing here outlives the link but ssh's own master.
	setTimeout(() => process.exit(0), 50);
}

// SIGTERM (a stop that could not wait, a machine going down) ends only the link: the runs go on there,
// and the next board read starts a new link, which takes them over.
for (const signal of /** @type {const} */ (["SIGTERM", "SIGINT", "SIGHUP"])) process.on(signal, () => process.exit(0));
process.on("uncaughtException", (error) => {
	log(`link error: ${error.stack ?? error.message}`);
	process.exit(1);
});

try {
	const watcher = watch(paths.runs, () => scan());
	watcher.on("error", () => undefined);
} catch {
	// The safety pass covers it.
}
setInterval(scan, SCAN_MS);
log(`started (pid ${self.pid})`);
scan();
