/**
 * At-most-once bookkeeping: one ritual per session per cwd. `claim` checks and marks in one
 * synchronous step, so no await can slip between the check and the mark. A claim is never
 * released on failure: a missed ritual is cheaper than a doubled one.
 */
export class RitualGuard {
	/** @type {Set<string>} */
	#claimed = new Set();

	/** @param {string} cwd */
	claim(cwd) {
		if (this.#claimed.has(cwd)) return false;
		this.#claimed.add(cwd);
		return true;
	}

	/** A new session may hold its own ritual. */
	reset() {
		this.#claimed.clear();
	}
}
