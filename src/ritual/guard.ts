/**
 * At-most-once bookkeeping: one ritual per session per cwd. `claim` checks and marks in one
 * synchronous step, so no await can slip between the check and the mark. A claim is never
 * released on failure: a missed ritual is cheaper than a doubled one.
 */
export class RitualGuard {
	private readonly claimed = new Set<string>();

	claim(cwd: string): boolean {
		if (this.claimed.has(cwd)) return false;
		this.claimed.add(cwd);
		return true;
	}

	/** A new session may hold its own ritual. */
	reset(): void {
		this.claimed.clear();
	}
}
