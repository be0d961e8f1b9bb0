// Snapshots of a host's rows' workspaces, off the event path: host-agent follows every row of a host in
// one process, and a row's snapshot (several git calls over its whole worktree) used to hold every other
// row's events behind it. Here at most a few run at once per host, and they are coalesced per row: one
// asked for while that row's runs starts once after it (with the work as it is then), however many
// tool calls asked meanwhile.

/** Snapshots at once per host (each is git over a whole worktree: disk and CPU, not waiting). */
export const SNAPSHOT_LANES = 2;

/**
 * @template T
 * @typedef {object} Slot
 * @property {() => Promise<T>} work
 * @property {boolean} running
 * @property {{ resolve: (value: T) => void, reject: (error: unknown) => void }[]} waiting  for the next run
 * @property {boolean} queued
 */

/** @param {number} [lanes] */
export function snapshotLane(lanes = SNAPSHOT_LANES) {
	/** @type {Map<string, Slot<any>>} */
	const slots = new Map();
	/** @type {string[]} */
	const order = [];
	let running = 0;

	function pump() {
		while (running < lanes && order.length > 0) {
			const key = /** @type {string} */ (order.shift());
			const slot = slots.get(key);
			if (!slot) continue;
			slot.queued = false;
			slot.running = true;
			running += 1;
			const waiters = slot.waiting.splice(0);
			slot
				.work()
				.then(
					(value) => {
						for (const waiter of waiters) waiter.resolve(value);
					},
					(error) => {
						for (const waiter of waiters) waiter.reject(error);
					},
				)
				.finally(() => {
					running -= 1;
					slot.running = false;
					if (slot.waiting.length > 0) queue(key, slot);
					else slots.delete(key);
					pump();
				});
		}
	}

	/** @param {string} key @param {Slot<any>} slot */
	function queue(key, slot) {
		if (slot.queued) return;
		slot.queued = true;
		order.push(key);
	}

	return {
		/**
		 * Runs `work` for `key` once the lane has room: with a run for `key` going, once after it; with one
		 * already waiting, that one (its `work` replaced by this newer one) serves this call too.
		 * @template T @param {string} key @param {() => Promise<T>} work @returns {Promise<T>}
		 */
		request(key, work) {
			return new Promise((resolve, reject) => {
				const slot = slots.get(key) ?? { work, running: false, waiting: [], queued: false };
				slots.set(key, slot);
				slot.work = work;
				slot.waiting.push({ resolve, reject });
				if (!slot.running) queue(key, slot);
				pump();
			});
		},
		/** Snapshots running now (for tests and the bench). */
		get running() {
			return running;
		},
	};
}

/** The lane every follow in this process shares: one host-agent serves one host. */
export const hostSnapshots = snapshotLane();
