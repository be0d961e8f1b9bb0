// A run's fetch-back, one at a time (run-link.mjs): the host said its workspace moved, so its commits come
// into the row's worktree; a request while one runs makes one more after it. The last one, after the
// run ended, says why the work could not be brought back (the row says 'work not fetched'), except a
// full disk here: then the row waits for space (`holding`) and the fetch is tried again until it fits
// or the row is stopped, so a disk that fills at a run's end loses none of its work.
import { layOver } from "./git-travel.mjs";

/** What git or the file system says when a disk has no room (git: "No space left on device"). */
const DISK_FULL = /no space left on device|ENOSPC|disk quota exceeded|EDQUOT/i;
/** Between tries while the disk is full: each is a whole fetch from the target. */
const SPACE_RETRY_MS = 5000;

/**
 * @param {{ fetch: () => Promise<void>, worktree: string, rowId: string, say: (text: string) => void,
 *   holding?: (waiting: boolean) => void, keepWaiting?: () => boolean, retryMs?: number }} options
 *   holding: told when the last fetch starts and stops waiting for space; keepWaiting: false ends the wait
 *   (a stop), the work then not fetched.
 */
export function fetchSync({
	fetch,
	worktree,
	rowId,
	say,
	holding,
	keepWaiting = () => true,
	retryMs = SPACE_RETRY_MS,
}) {
	/** @type {Promise<string | undefined> | undefined} */
	let running;
	let again = false;
	/** @returns {Promise<string | undefined>} why it failed */
	const once = async () => {
		try {
			await fetch();
			await layOver({ worktree, rowId });
			return undefined;
		} catch (error) {
			const why = error instanceof Error ? error.message : String(error);
			say(`fetch-back: ${why}`);
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
		 * @returns {Promise<string | undefined>} why the work could not be brought back
		 */
		async final() {
			if (running) await running;
			let why = await once();
			if (!why || !DISK_FULL.test(why)) return why;
			holding?.(true);
			try {
				while (why && DISK_FULL.test(why) && keepWaiting()) {
					await new Promise((resolve) => setTimeout(resolve, retryMs));
					why = await once();
				}
			} finally {
				holding?.(false);
			}
			return why;
		},
	};
}
