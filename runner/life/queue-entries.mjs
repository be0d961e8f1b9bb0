// Queue entries: queue/<place>-<runId>.json, one per queued run, FIFO by name. An entry is named and
// placed under the queue's lock (queue-lock.mjs), after every entry already waiting, so the names' order
// is the order entries entered in. It is checked once (entries never change), refused when bad, and
// claimed with one rename into its run's directory: whoever's rename wins owns the run (to start or stop).
import { existsSync, lstatSync, lutimesSync, readdirSync, renameSync } from "node:fs";
import { basename, join } from "node:path";
import { LOCAL_TARGET, TARGET_NAME } from "./vocabulary.mjs";
import { ensureDir, writeJsonAtomic } from "../store/fs-util.mjs";
import { queueDir, queueSteps, withQueueLock } from "./queue-lock.mjs";
import { recordStartFailure } from "./run-end.mjs";
import { processStartTime } from "../store/proc.mjs";
import { isValidId, runDirOf } from "../store/store-layout.mjs";
import { readJsonObject, readTextNoFollow } from "../store/safe-read.mjs";

/**
 * A queue entry names its run by ids only; the run's directory is derived from them (runDirOf), never
 * read from the file, so a planted entry cannot make a pumper start a run.json outside the store.
 * @typedef {object} QueueEntry
 * @property {string} rowId
 * @property {string} runId
 * @property {number} at        its place: ms, after every entry waiting when it entered
 * @property {string} [target]  where the run goes (absent: this machine)
 */

/** @typedef {{ entry: QueueEntry, runDir: string } | { invalid: string }} EntryRead */

/** A place has 15 digits in a name. */
const LAST_PLACE = 10 ** 15 - 1;

export { queueDir };

/** @param {{ at: number, runId: string }} entry */
export function entryName(entry) {
	return `${String(entry.at).padStart(15, "0")}-${entry.runId}.json`;
}

/**
 * Adds a prepared run (run.json and a queued status.json already in its directory) to the queue. Its
 * place is the moment it enters: it is named and placed under the queue's lock, after every entry that
 * waits (a tie in one millisecond, or a clock that went back, takes the next millisecond after them), so
 * no entry can appear before one that waited when it came, nor behind a younger one that already started.
 * @param {string} storeRoot @param {Omit<QueueEntry, "at">} entry
 */
export function enqueue(storeRoot, entry) {
	const dir = queueDir(storeRoot);
	ensureDir(dir);
	const target = entry.target && entry.target !== LOCAL_TARGET ? { target: entry.target } : {};
	withQueueLock(dir, () => {
		const queued = {
			rowId: entry.rowId,
			runId: entry.runId,
			at: placeAfter(queuedNames(storeRoot), Date.now()),
			...target,
		};
		queueSteps.at("named", entryName(queued));
		writeJsonAtomic(join(dir, entryName(queued)), queued);
	});
}

/** Now, or just after the newest waiting entry when that is not older. @param {string[]} names sorted @param {number} now */
function placeAfter(names, now) {
	for (let n = names.length - 1; n >= 0; n--) {
		const newest = Number(/^(\d{15})-/.exec(names[n] ?? "")?.[1]);
		// A place beyond a name's 15 digits (planted) is not followed.
		if (Number.isSafeInteger(newest)) return newest >= now && newest < LAST_PLACE ? newest + 1 : now;
	}
	return now;
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

/** Forgets the checked entries of a store that are no longer in `names`. @param {string} storeRoot @param {string[]} names */
export function forgetGoneEntries(storeRoot, names) {
	const known = checked.get(storeRoot);
	if (known) for (const name of known.keys()) if (!names.includes(name)) known.delete(name);
}

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
	let value;
	try {
		if (!lstatSync(path).isFile()) return { invalid: "not a regular file" };
		value = JSON.parse(readTextNoFollow(path));
	} catch (error) {
		return { invalid: `unreadable (${error instanceof Error ? error.message : String(error)})` };
	}
	const entry = entryFrom(value);
	if (typeof entry === "string") return { invalid: entry };
	if (entryName(entry) !== name) return { invalid: `its /runId and /at do not match its file name` };
	const runDir = runDirOf(storeRoot, entry.rowId, entry.runId);
	if (!existsSync(join(runDir, "run.json")))
		return { invalid: `names no run: ${join(runDir, "run.json")} is missing` };
	return { entry, runDir };
}

/** An entry's fields, checked, or what is wrong with them. @param {unknown} value @returns {QueueEntry | string} */
export function entryFrom(value) {
	if (value === null || typeof value !== "object" || Array.isArray(value)) return "/ must be object";
	const fields = /** @type {Record<string, unknown>} */ (value);
	for (const field of ["rowId", "runId"])
		if (!isValidId(fields[field])) return `/${field} must be an id (letters, digits, "-", "_")`;
	if (typeof fields.at !== "number" || !Number.isSafeInteger(fields.at) || fields.at < 0)
		return "/at must be a time in ms";
	if (fields.target !== undefined && (typeof fields.target !== "string" || !TARGET_NAME.test(fields.target)))
		return "/target must be a target name";
	return {
		rowId: String(fields.rowId),
		runId: String(fields.runId),
		at: fields.at,
		...(typeof fields.target === "string" ? { target: fields.target } : {}),
	};
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
			const status = readJsonObject(join(runDir, "status.json"));
			return status?.state === "queued" && status.endedAt === undefined && !existsSync(join(runDir, "claim.json"));
		});
}

/**
 * Takes a bad entry out of the queue (renamed to "<name>.refused", kept for whoever looks) and fails
 * the run it was for, when that run still waits with no other entry: its row shows why instead of
 * waiting forever. Whoever's rename wins does it, once; a pumper never starts anything from it.
 * @param {string} storeRoot @param {string} name @param {string} reason
 */
export function refuseEntry(storeRoot, name, reason) {
	const path = join(queueDir(storeRoot), name);
	try {
		renameSync(path, `${path}.refused`);
	} catch {
		return;
	}
	const runId = /^\d{15}-(.+)\.json$/.exec(name)?.[1];
	if (!runId || !isValidId(runId) || queuedEntryName(storeRoot, runId)) return;
	for (const runDir of waitingRunDirs(storeRoot, runId))
		recordStartFailure(runDir, `queue entry ${path} refused: ${reason}`);
}

/**
 * Takes a queued run out of the queue, under the queue's lock: whoever's rename succeeds owns the run
 * (to start or to stop). See claimHeld.
 * @param {string} storeRoot @param {string} name @param {string} runDir @param {string} purpose @param {string} [slot]
 */
export function claimEntry(storeRoot, name, runDir, purpose, slot) {
	return withQueueLock(queueDir(storeRoot), () => claimHeld(storeRoot, name, runDir, purpose, slot));
}

/**
 * claimEntry for a caller that holds the queue's lock. A start names the slot it holds, so the runs'
 * own records show which run held which slot when. When the claim cannot be written (a full disk) the
 * entry goes back to its place, before the lock is released, and the error is thrown.
 * @param {string} storeRoot @param {string} name @param {string} runDir @param {string} purpose @param {string} [slot]
 */
export function claimHeld(storeRoot, name, runDir, purpose, slot) {
	const entry = join(queueDir(storeRoot), name);
	const claim = join(runDir, "claim.json");
	// A run is claimed once: a second entry for it is a stray and never starts it again.
	if (existsSync(claim)) return false;
	const read = readEntry(storeRoot, name);
	const target = "entry" in read ? (read.entry.target ?? LOCAL_TARGET) : undefined;
	try {
		// The claim's time is now, not the entry's: a claimed run's start grace counts from it.
		const now = new Date();
		lutimesSync(entry, now, now);
		renameSync(entry, claim);
	} catch {
		return false;
	}
	queueSteps.at("claimed", name);
	// FIFO evidence for whoever audits the queue: entries of its target older than this one still waiting (0 in FIFO).
	let olderWaiting = -1;
	try {
		olderWaiting = queuedNames(storeRoot).filter(
			(other) => other < name && targetOf(storeRoot, other) === target,
		).length;
	} catch {
		// Unknown.
	}
	try {
		queueSteps.at("claim-write", name);
		// A start keeps its entry: if its claimer dies before the runner starts, the run goes back (dead-claim.mjs).
		const queued = purpose === "start" && "entry" in read ? { queued: read.entry } : {};
		writeJsonAtomic(claim, {
			by: process.pid,
			start: processStartTime(process.pid),
			purpose,
			at: Date.now(),
			olderWaiting,
			...(slot ? { slot: basename(slot) } : {}),
			...queued,
		});
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

/** A waiting entry's target (undefined for a bad one). @param {string} storeRoot @param {string} name */
function targetOf(storeRoot, name) {
	const read = readEntry(storeRoot, name);
	return "entry" in read ? (read.entry.target ?? LOCAL_TARGET) : undefined;
}
