// What a run is doing, asked one way (docs/engine.md, "The run's life"): `phase(row)` answers every
// "may this row change, does it count, must the tick follow it". Pure, on what a read made of the row
// (a run nobody owns reads ended already, or waiting for a new link: orphan.mjs derive).

/**
 * - live: an owner process runs it (working, waiting in place for an answer, starting);
 * - busy: not over, but nothing runs it right now (queued; a target run whose link is gone, taken over next);
 * - ended: over (recorded or derived), or the row cannot be read.
 * @typedef {"live" | "busy" | "ended"} Phase
 */

/**
 * Why, in one word: live "running", "asking" (waiting in place for an answer) or "starting"; busy
 * "queued" (waiting for a free slot) or "unowned" (a target run whose link is gone: a new one takes it
 * over); ended: its state ("completed", "failed", ..., "error" when its files cannot be read).
 * @param {{ state: string, alive: boolean }} row @returns {{ phase: Phase, why: string }}
 */
export function phase(row) {
	if (row.alive)
		return {
			phase: "live",
			why: row.state === "needs_input" ? "asking" : row.state === "queued" ? "starting" : "running",
		};
	if (row.state === "queued") return { phase: "busy", why: "queued" };
	if (row.state === "working") return { phase: "busy", why: "unowned" };
	return { phase: "ended", why: row.state };
}

/** Not over: live or busy. @param {{ state: string, alive: boolean }} row */
export const notOver = (row) => phase(row).phase !== "ended";
