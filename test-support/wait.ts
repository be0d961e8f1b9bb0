/** Waiting on a condition, never on the clock: tests poll what they need until it holds. */

/** Polls until `predicate` returns a truthy value; the timeout is a hang guard, not a timing assert. */
export async function waitFor<T>(
	predicate: () => T | Promise<T>,
	what: string | (() => string),
	timeoutMs = 20_000,
	intervalMs = 50,
): Promise<NonNullable<T>> {
	const deadline = Date.now() + timeoutMs;
	let last: unknown;
	for (;;) {
		try {
			const value = await predicate();
			if (value) return value as NonNullable<T>;
		} catch (error) {
			last = error;
		}
		if (Date.now() > deadline) {
			const described = typeof what === "function" ? what() : what;
			throw new Error(`timed out waiting for ${described}${last ? `: ${String(last)}` : ""}`);
		}
		await new Promise((r) => setTimeout(r, intervalMs));
	}
}
