// The queue's lock, queue/.lock: an owner file like a row lock (runner/store/row-lock.mjs: O_EXCL, the
// holder's pid and start time, broken only when the holder is provably gone). Whoever names and places
// an entry, lists the queue to claim from it, or claims an entry to stop its run holds it, so an entry's
// place is the moment it enters and nobody lists the queue while a claimed entry is out of it; whoever
// breaks a stale slot holds it too, so two breakers never move each other's slot. It is held for file
// operations only (never across a spawn, a /proc scan or a wait), so a writer that finds it held waits.
import { join } from "node:path";
import { ensureDir } from "../store/fs-util.mjs";
import { tryLockFile } from "../store/row-lock.mjs";

/** Past this a live holder is not working but stopped (SIGSTOP): say so instead of waiting on. */
const LOCK_WAIT_MS = 10_000;

/**
 * Step points of the queue's writers, for tests that drive two of them step by step (a no-op otherwise):
 * `named` (an entry has its name, not yet its place), `slot` (a pump holds a slot, not yet the lock), `claimed` (an entry is out of the queue, its claim
 * not yet written), `claim-write` (the claim is about to be written), `spawn` (a claimed run's runner is
 * about to be spawned, the lock released), `lock-busy` (the lock is held by another), `release` (a
 * slot was found to name the run being released, not yet removed), `owner` (a reader of a run's
 * owner found no entry for it, not yet looked for its claim).
 * @type {{ at: (point: string, name: string) => void }}
 */
export const queueSteps = { at: () => {} };

/** @param {string} storeRoot */
export function queueDir(storeRoot) {
	return join(storeRoot, "queue");
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Takes the queue's lock, waiting (synchronously, like every queue step) while a live process holds it.
 * Returns its release. Throws when it cannot be created (ENOSPC, EACCES) or stays held past LOCK_WAIT_MS.
 * @param {string} queueDir
 * @returns {() => void}
 */
export function holdQueueLock(queueDir) {
	const path = join(queueDir, ".lock");
	const deadline = Date.now() + LOCK_WAIT_MS;
	for (let pause = 1, told = false; ; pause = Math.min(pause * 2, 16)) {
		const release = tryLockFile(path);
		if (release) return release;
		if (!told) queueSteps.at("lock-busy", path);
		told = true;
		if (Date.now() > deadline)
			throw new Error(`the queue is busy: ${path} has been held by a live process for ${LOCK_WAIT_MS / 1000} s`);
		Atomics.wait(sleeper, 0, 0, pause);
	}
}

/**
 * Runs `fn` holding the queue's lock.
 * @template T
 * @param {string} queueDir @param {() => T} fn
 * @returns {T}
 */
export function withQueueLock(queueDir, fn) {
	const release = holdQueueLock(queueDir);
	try {
		return fn();
	} finally {
		release();
	}
}

/**
 * Turns under the store's queue lock, for whoever removes a slot file its live owner does not hold (a
 * stale slot's breaker, the reader that records a dead run's end): two of them never remove a slot the
 * other, or a pump, took since it was judged.
 * @param {string} storeRoot
 * @returns {(fn: () => void) => void}
 */
export function queueTurns(storeRoot) {
	return (fn) => {
		ensureDir(queueDir(storeRoot));
		withQueueLock(queueDir(storeRoot), fn);
	};
}
