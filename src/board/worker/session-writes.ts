/**
 * pi's session file on a full disk. pi writes each entry as it is made (SessionManager._persist: the first
 * write creates the file with "wx" and writes every entry so far, each later one appends a line), and a
 * write that fails throws out of the agent loop: the worker exited with code 1 ("ENOSPC"), a first file
 * left half written refused every later try ("EEXIST"), an append left a torn last line, and the tools'
 * output was lost with the worker. Here a write the disk refuses is undone (a first file removed, the
 * file cut back to its last whole line) and the entry waits in memory, in order, as the runner's own
 * files do: it goes out with the next write, a try each second, and before the session ends, which
 * waits for space (the runner holds the slot meanwhile). pi's entries in memory are unchanged, so the
 * run goes on; only the file lags. Reaching into pi's private _persist is the one way in: when pi's
 * session manager has no such method, nothing is wrapped and pi fails as it did.
 */
import { existsSync, statSync, truncateSync, unlinkSync } from "node:fs";

/** Errors that say the disk (not the data) is the problem: as runner/run-files.mjs. */
const DISK_ERRORS = ["ENOSPC", "EDQUOT", "EFBIG", "EIO"];
const RETRY_MS = 1000;
/** How long the session's end waits for space (the runner's own end waits as long). */
const END_WAIT_MS = 60 * 60 * 1000;

interface Persisting {
	_persist?: (entry: unknown) => void;
	flushed?: boolean;
	sessionFile?: string;
}

export interface SessionWrites {
	/** Entries the disk has not taken yet. */
	waiting(): number;
	/** Writes what waits; resolves when it is written or after `limitMs`, whether it was. */
	drain(limitMs?: number): Promise<boolean>;
}

const isDiskError = (error: unknown): boolean =>
	DISK_ERRORS.includes(String((error as NodeJS.ErrnoException | undefined)?.code));

function sizeOf(path: string | undefined): number | undefined {
	try {
		return path ? statSync(path).size : undefined;
	} catch {
		return undefined;
	}
}

/** Back to the file as it was before a write the disk refused. */
function undo(path: string | undefined, first: boolean, size: number | undefined): void {
	if (!path) return;
	try {
		// A first write made the file ("wx"): it goes, so the next first write can make it again.
		if (first) {
			if (existsSync(path)) unlinkSync(path);
		} else if (size !== undefined) truncateSync(path, size);
	} catch {
		// The next write tries again from what is there; a reader skips a torn last line.
	}
}

const wrapped = new WeakMap<object, SessionWrites>();

/** Wraps the session manager's writes (once per manager); undefined when pi's shape is not the one known. */
export function guardSessionWrites(manager: object): SessionWrites | undefined {
	const known = wrapped.get(manager);
	if (known) return known;
	const target = manager as Persisting;
	const persist = target._persist;
	if (typeof persist !== "function") return undefined;
	const waiting: unknown[] = [];
	let timer: NodeJS.Timeout | undefined;

	/** One write as pi makes it; false when the disk refused it (undone). */
	const writeOne = (entry: unknown): boolean => {
		const first = !target.flushed;
		const size = first ? undefined : sizeOf(target.sessionFile);
		try {
			persist.call(manager, entry);
			return true;
		} catch (error) {
			if (!isDiskError(error)) throw error;
			undo(target.sessionFile, first, size);
			return false;
		}
	};
	/** Writes what waits, in order; true when nothing waits any more. */
	const flush = (): boolean => {
		while (waiting.length > 0) {
			const first = !target.flushed;
			if (!writeOne(waiting[0])) return false;
			// A first write wrote every entry pi holds: those waiting too.
			if (first && target.flushed) waiting.length = 0;
			else waiting.shift();
		}
		if (timer) clearInterval(timer);
		timer = undefined;
		return true;
	};
	target._persist = (entry: unknown): void => {
		if (waiting.length === 0 && writeOne(entry)) return;
		waiting.push(entry);
		if (waiting.length > 1) flush();
		timer ??= setInterval(flush, RETRY_MS).unref();
	};
	const writes: SessionWrites = {
		waiting: () => waiting.length,
		async drain(limitMs = END_WAIT_MS) {
			for (const giveUp = Date.now() + limitMs; !flush(); ) {
				if (Date.now() > giveUp) return false;
				await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
			}
			return true;
		},
	};
	wrapped.set(manager, writes);
	return writes;
}
