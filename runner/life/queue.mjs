// The run queue: queued runs are files, not processes. queue/<dispatchedAt>-<runId>.json entries start
// FIFO across every pi process: pumpQueue() claims a slot for the oldest entry, then the entry itself
// (one atomic rename into the run's directory, so exactly one pumper or stopper wins it), then spawns
// that run's runner. Finishing runners and board reads both pump, so a killed runner never strands it.
// Each target has its own slots and limit (config.json, read at every pump): an entry whose target is
// full waits without blocking entries of other targets; a non-local run's owner is its link
// (targets/target-link.mjs), not a runner.
import { closeSync, existsSync, lstatSync, openSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { basename, join } from "node:path";
import { LOCAL_TARGET, TARGET_NAME } from "./vocabulary.mjs";
import { readLimits } from "./board-config.mjs";
import { DISK_FULL_BYTES, diskSpace, ensureDir, FILE_MODE, writeJsonAtomic } from "../store/fs-util.mjs";
import { processStartTime, RUN_TAG } from "../store/proc.mjs";
import { recordStartFailure } from "./run-end.mjs";
import { releaseSlot, slotsOf, sweepStaleSlots, tryClaimSlot } from "./slots.mjs";
import { LINK_PATH, RUNNER_PATH, spawnRunner } from "./spawn-runner.mjs";
import { isValidId, runDirOf } from "../store/store-layout.mjs";

/**
 * A queue entry names its run by ids only; the run's directory is derived from them (runDirOf), never
 * read from the file, so a planted entry cannot make a pumper start a run.json outside the store.
 * @typedef {object} QueueEntry
 * @property {string} rowId
 * @property {string} runId
 * @property {number} at
 * @property {string} [target]  where the run goes (absent: this machine)
 */

/** @typedef {{ entry: QueueEntry, runDir: string } | { invalid: string }} EntryRead */

/** @param {string} storeRoot */
export function queueDir(storeRoot) {
	return join(storeRoot, "queue");
}

/** @param {{ at: number, runId: string }} entry */
function entryName(entry) {
	return `${String(entry.at).padStart(15, "0")}-${entry.runId}.json`;
}

/**
 * Adds a prepared run (run.json and a queued status.json already in its directory) to the queue. Its
 * place is the moment it enters the queue, so no entry can appear behind a younger one that already started.
 * @param {string} storeRoot @param {Omit<QueueEntry, "at">} entry
 */
export function enqueue(storeRoot, entry) {
	ensureDir(queueDir(storeRoot));
	const target = entry.target && entry.target !== LOCAL_TARGET ? { target: entry.target } : {};
	const queued = { rowId: entry.rowId, runId: entry.runId, at: Date.now(), ...target };
	writeJsonAtomic(join(queueDir(storeRoot), entryName(queued)), queued);
}

/** Entry file names, oldest first. @param {string} storeRoot */
export function queuedNames(storeRoot) {
	try {
		return readdirSync(queueDir(storeRoot))
			.filter((name) => name.endsWith(".json") && !name.startsWith("."))
			.sort();
	} catch (error) {
		if (/** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT") return [];
		throw error;
	}
}

/** @param {string} storeRoot @param {string} runId */
export function queuedEntryName(storeRoot, runId) {
	return queuedNames(storeRoot).find((name) => name.endsWith(`-${runId}.json`));
}

/** Good entries by store and name: an entry never changes (temp + rename), so each is read once. @type {Map<string, Map<string, EntryRead>>} */
const checked = new Map();

/**
 * A queue entry, checked: a plain file, its fields' types, its name, and a run.json where its ids say.
 * @param {string} storeRoot @param {string} name @returns {EntryRead}
 */
export function readEntry(storeRoot, name) {
	const known = checked.get(storeRoot)?.get(name);
	if (known) return known;
	const read = checkEntry(storeRoot, name);
	if ("entry" in read) {
		const store = checked.get(storeRoot) ?? new Map();
		checked.set(storeRoot, store.set(name, read));
	}
	return read;
}

/** @param {string} storeRoot @param {string} name @returns {EntryRead} */
function checkEntry(storeRoot, name) {
	const path = join(queueDir(storeRoot), name);
	/** @type {Record<string, unknown>} */
	let value;
	try {
		if (!lstatSync(path).isFile()) return { invalid: "not a regular file" };
		value = JSON.parse(readFileSync(path, "utf8"));
	} catch (error) {
		return { invalid: `unreadable (${error instanceof Error ? error.message : String(error)})` };
	}
	if (value === null || typeof value !== "object" || Array.isArray(value)) return { invalid: "/ must be object" };
	for (const field of ["rowId", "runId"]) if (!isValidId(value[field])) return { invalid: `/${field} must be an id (letters, digits, "-", "_")` };
	if (typeof value.at !== "number" || !Number.isSafeInteger(value.at) || value.at < 0) return { invalid: "/at must be a time in ms" };
	if (value.target !== undefined && (typeof value.target !== "string" || !TARGET_NAME.test(value.target))) return { invalid: "/target must be a target name" };
	const entry = { rowId: String(value.rowId), runId: String(value.runId), at: value.at, ...(typeof value.target === "string" ? { target: value.target } : {}) };
	if (entryName(entry) !== name) return { invalid: `its /runId and /at do not match its file name` };
	const runDir = runDirOf(storeRoot, entry.rowId, entry.runId);
	if (!existsSync(join(runDir, "run.json"))) return { invalid: `names no run: ${join(runDir, "run.json")} is missing` };
	return { entry, runDir };
}

/** The runs of a store whose id is `runId` and that still wait for a start. @param {string} storeRoot @param {string} runId */
function waitingRunDirs(storeRoot, runId) {
	let rows;
	try {
		rows = readdirSync(join(storeRoot, "rows")).filter(isValidId);
	} catch {
		return [];
	}
	return rows
		.map((rowId) => runDirOf(storeRoot, rowId, runId))
		.filter((runDir) => {
			try {
				const status = JSON.parse(readFileSync(join(runDir, "status.json"), "utf8"));
				return status?.state === "queued" && status.endedAt === undefined && !existsSync(join(runDir, "claim.json"));
			} catch {
				return false;
			}
		});
}

/**
 * Takes a bad entry out of the queue (renamed to "<name>.refused", kept for whoever looks) and fails
 * the run it was for, when that run still waits with no other entry: its row shows why instead of
 * waiting forever. Whoever's rename wins does it, once; a pumper never starts anything from it.
 * @param {string} storeRoot @param {string} name @param {string} reason
 */
function refuseEntry(storeRoot, name, reason) {
	const path = join(queueDir(storeRoot), name);
	try {
		renameSync(path, `${path}.refused`);
	} catch {
		return;
	}
	const runId = /^\d{15}-(.+)\.json$/.exec(name)?.[1];
	if (!runId || !isValidId(runId) || queuedEntryName(storeRoot, runId)) return;
	for (const runDir of waitingRunDirs(storeRoot, runId)) recordStartFailure(runDir, `queue entry ${path} refused: ${reason}`);
}

/**
 * Takes a queued run out of the queue: whoever's rename succeeds owns the run (to start or to stop).
 * A start names the slot it holds, so the runs' own records show which run held which slot when.
 * When the claim cannot be written (a full disk) the entry goes back and the error is thrown.
 * @param {string} storeRoot @param {string} name @param {string} runDir @param {string} purpose @param {string} [slot]
 */
export function claimEntry(storeRoot, name, runDir, purpose, slot) {
	const entry = join(queueDir(storeRoot), name);
	const claim = join(runDir, "claim.json");
	// A run is claimed once: a second entry for it is a stray and never starts it again.
	if (existsSync(claim)) return false;
	try {
		renameSync(entry, claim);
	} catch {
		return false;
	}
	// FIFO evidence for whoever audits the queue: entries older than this one still waiting (0 in FIFO).
	let olderWaiting = -1;
	try {
		olderWaiting = queuedNames(storeRoot).filter((other) => other < name).length;
	} catch {
		// Unknown.
	}
	try {
		writeJsonAtomic(claim, { by: process.pid, start: processStartTime(process.pid), purpose, at: Date.now(), olderWaiting, ...(slot ? { slot: basename(slot) } : {}) });
	} catch (error) {
		// The temp file failed, so claim.json still holds the entry's bytes: put it back in its place.
		try {
			renameSync(claim, entry);
		} catch {
			// Left claimed: its readers record that it never started.
		}
		throw error;
	}
	return true;
}

/**
 * @typedef {object} PumpOptions
 * @property {number} maxConcurrent
 * @property {string} node         node binary for the runner
 * @property {NodeJS.ProcessEnv} env  base environment of the runner (the run's tag is added)
 */

/**
 * Starts queued runs while their targets have free slots, oldest first (FIFO per target). Returns the
 * started run ids, and the reason the queue is stuck when it cannot start anything for a reason other
 * than "all slots taken" (a full disk, EACCES, a bad config.json). Bad entries are refused wherever they
 * stand in the queue; each entry is checked once.
 * @param {string} storeRoot @param {PumpOptions} options
 * @returns {{ started: string[], error?: string }}
 */
export function pumpQueue(storeRoot, options) {
	/** @type {string[]} */
	const started = [];
	let names;
	try {
		names = queuedNames(storeRoot);
	} catch (error) {
		return { started, error: `cannot read the queue ${queueDir(storeRoot)}: ${String(error)}` };
	}
	const known = checked.get(storeRoot);
	if (known) for (const name of known.keys()) if (!names.includes(name)) known.delete(name);
	// Nothing waits: a good moment to free what a runner killed at its very end still holds.
	if (names.length === 0) {
		sweepStaleSlots(slotsOf(storeRoot, LOCAL_TARGET).dir);
		return { started };
	}
	const limits = readLimits(storeRoot);
	if (limits.error) return { started, error: limits.error };
	/** Targets found full at this pump: their younger entries wait. */
	const full = new Set();
	for (const name of names) {
		const read = readEntry(storeRoot, name);
		if ("invalid" in read) {
			refuseEntry(storeRoot, name, read.invalid);
			continue;
		}
		const target = read.entry.target ?? LOCAL_TARGET;
		if (full.has(target)) continue;
		const max = target === LOCAL_TARGET ? (limits.local ?? options.maxConcurrent) : limits.targets.get(target);
		if (max === undefined) {
			// Removed while this run waited (targets remove refuses that, but not a hand edit): say so on the row.
			if (claimEntry(storeRoot, name, read.runDir, "start")) recordStartFailure(read.runDir, `target ${target} does not exist any more (it was removed while this run waited)`);
			continue;
		}
		const outcome = startEntry(storeRoot, name, read, target, max, options);
		if (outcome === "full") full.add(target);
		else if (outcome !== "lost") {
			if ("error" in outcome) return { started, error: outcome.error };
			started.push(outcome.started);
		}
	}
	return { started };
}

/**
 * @param {string} storeRoot @param {string} name @param {{ entry: QueueEntry, runDir: string }} read
 * @param {string} target @param {number} max @param {PumpOptions} options
 * @returns {"full" | "lost" | { started: string } | { error: string }}
 */
function startEntry(storeRoot, name, read, target, max, options) {
	const { entry, runDir } = read;
	const space = diskSpace(storeRoot);
	// Too little room for a run to record itself: nothing starts until there is.
	if (space !== undefined && space < DISK_FULL_BYTES) return { error: `disk full: ${space} bytes free on the store's disk (${storeRoot}); queued runs start when space returns` };
	let slot;
	try {
		const slots = slotsOf(storeRoot, target);
		ensureDir(slots.dir);
		slot = tryClaimSlot(slots.dir, Math.max(1, max), { pid: process.pid, start: processStartTime(process.pid), runId: entry.runId, rowId: entry.rowId }, slots.holds);
	} catch (error) {
		return { error: error instanceof Error ? error.message : String(error) };
	}
	if (!slot) return "full";
	/** @param {unknown} error @param {number} [fd] */
	const failed = (error, fd) => {
		if (fd !== undefined) closeSync(fd);
		releaseSlot(slot, entry.runId);
		return { error: `cannot start the run in ${runDir}: ${error instanceof Error ? error.message : String(error)}` };
	};
	let logFd;
	try {
		// Opened before the claim: a run that cannot get its log (a full disk) stays queued.
		logFd = openSync(join(runDir, "runner.log"), "a", FILE_MODE);
	} catch (error) {
		return failed(error);
	}
	let claimed;
	try {
		claimed = claimEntry(storeRoot, name, runDir, "start", slot);
	} catch (error) {
		return failed(error, logFd);
	}
	if (!claimed) {
		closeSync(logFd);
		releaseSlot(slot, entry.runId);
		return "lost";
	}
	try {
		spawnRunner(runDir, slot, options.node, { ...options.env, [RUN_TAG]: entry.runId }, target === LOCAL_TARGET ? RUNNER_PATH : LINK_PATH, logFd);
	} catch (error) {
		// The claimed run is recorded as "runner never started" by its next reader.
		releaseSlot(slot, entry.runId);
		return { error: `cannot start a runner in ${runDir}: ${error instanceof Error ? error.message : String(error)}` };
	}
	return { started: entry.runId };
}
