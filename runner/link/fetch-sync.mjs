// A run's fetch-back, one at a time (run-link.mjs): the host said its workspace moved, so its commits come
// into the row's worktree; a request while one runs makes one more after it. The last one, after the
// run ended, says why the work could not be brought back (the row says 'work not fetched').
import { layOver } from "./git-travel.mjs";

/**
 * @param {{ fetch: () => Promise<void>, worktree: string, rowId: string, say: (text: string) => void }} options
 */
export function fetchSync({ fetch, worktree, rowId, say }) {
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
			return once();
		},
	};
}
