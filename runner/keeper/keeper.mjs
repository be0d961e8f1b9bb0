// The store's keeper process (docs/engine.md, "The keeper"): `node keeper.mjs <storeRoot> <maxConcurrent>`,
// detached, started by ensureKeeper. It makes itself the one keeper (keeper.json), then runs its duties
// (duties.mjs) on every change of queue/ and outbox/events/ (watched) and at least every
// 2 s (a dead runner or a disk with space again changes no file), while any duty has work. Idle for
// IDLE_GRACE_MS, it gives up keeper.json and looks once more: work that came meanwhile is its own again
// (whoever queued it saw a live keeper and started none), else it exits.
import { watch } from "node:fs";
import { join } from "node:path";
import { RUN_TAG } from "../store/proc.mjs";
import { DUTIES } from "./duties.mjs";
import { claimKeeper } from "./keeper-file.mjs";

// A pump whose target is full scans /proc for a slot whose run is gone: every 2 s keeps a freed slot within the 5 s bound.
const POLL_MS = 2000;
const IDLE_GRACE_MS = Number(process.env.AGENT_BOARD_KEEPER_IDLE_MS) || 3000;
const WAKE_DEBOUNCE_MS = 50;

const [rootArg, maxArg] = process.argv.slice(2);
if (!rootArg) {
	process.stderr.write("usage: keeper.mjs <storeRoot> [maxConcurrent]\n");
	process.exit(2);
}
const storeRoot = rootArg;

const env = { ...process.env };
// Never counted as a process of a run (its starter may be a runner, whose tag it would inherit).
delete env[RUN_TAG];
let lastLine = "";
/** @param {string} line */
function log(line) {
	// A full disk repeats its reason every pass: once is enough.
	if (line === lastLine) return;
	lastLine = line;
	try {
		process.stderr.write(`${new Date().toISOString()} keeper ${process.pid}: ${line}\n`);
	} catch {
		// The log is on the store's disk: a full one drops the line.
	}
}
const ctx = {
	maxConcurrent: Number(maxArg) > 0 ? Number(maxArg) : 4,
	node: process.execPath,
	env,
	log,
	wake: () => wake?.(),
};

let keeper = claimKeeper(storeRoot);
if (!keeper) process.exit(0);
log("started");
for (const duty of DUTIES) duty.start?.(storeRoot, ctx);

/** @type {(() => void) | undefined} */
let wake;
/** The directories watched so far: one made after the keeper started (outbox/events) is watched from the next pass. */
const watched = new Set();
function watchStore() {
	// Not notify/: a running row touches it four times a second, and a pass at each would cost a core at a
	// hundred rows. What notify/ would tell (a run's end, a death) the second's poll finds within the bounds.
	for (const dir of ["queue", "outbox/events"]) {
		if (watched.has(dir)) continue;
		try {
			watch(join(storeRoot, dir), { persistent: false }, () => setTimeout(() => wake?.(), WAKE_DEBOUNCE_MS)).on(
				"error",
				() => undefined,
			);
			watched.add(dir);
		} catch {
			// No such directory yet, or no inotify: the poll serves.
		}
	}
}

/** Waits for a change in the store or the poll, whichever comes first. */
function nextWake() {
	return new Promise((resolve) => {
		const timer = setTimeout(done, POLL_MS);
		function done() {
			clearTimeout(timer);
			wake = undefined;
			resolve(undefined);
		}
		wake = done;
	});
}

let idleSince = 0;
for (;;) {
	// Its file gone or another's (the store removed, or broken by someone who judged this process gone).
	if (!keeper.held()) {
		log("keeper.json is not mine any more: exiting");
		process.exit(0);
	}
	watchStore();
	let busy = false;
	for (const duty of DUTIES) {
		let wanted = false;
		try {
			wanted = duty.wanted(storeRoot);
		} catch (error) {
			log(`${duty.name}: ${error instanceof Error ? error.message : String(error)}`);
		}
		if (!wanted) continue;
		busy = true;
		try {
			await duty.pass(storeRoot, ctx);
		} catch (error) {
			log(`${duty.name}: ${error instanceof Error ? error.message : String(error)}`);
		}
	}
	if (busy) idleSince = 0;
	else if (idleSince === 0) idleSince = Date.now();
	else if (Date.now() - idleSince >= IDLE_GRACE_MS) {
		keeper.release();
		// Whoever queued before the release saw this keeper alive: its work is looked for after the release.
		if (!DUTIES.some((duty) => safeWanted(duty))) {
			log("idle: exiting");
			process.exit(0);
		}
		keeper = claimKeeper(storeRoot);
		if (!keeper) process.exit(0);
		idleSince = 0;
	}
	await nextWake();
}

/** @param {import("./duties.mjs").Duty} duty */
function safeWanted(duty) {
	try {
		return duty.wanted(storeRoot);
	} catch {
		return false;
	}
}
