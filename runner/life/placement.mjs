// Where a pool's run goes, decided once, when the queue claims it (docs/engine-targets.md, "Pools"):
// the member with the most free slots; ties go to the lowest load its far side reported at its last
// frame (per core; a member never heard from comes after those that were), then to the pool's order.
// A member that cannot be reached or refused a run lately (its link said so), or failed its last check,
// takes nothing.
// Pure: the queue gives each member's limit, live slots, health and check.

/** An unreachable record older than this no longer keeps a member out: the next run tries it. */
export const UNREACHABLE_HOLD_MS = 60_000;

/**
 * @typedef {object} Candidate
 * @property {string} name
 * @property {number} max        its limit
 * @property {number} live       its slots taken now
 * @property {import("./target-health.mjs").TargetHealth} [health]
 * @property {import("./target-health.mjs").TargetCheckRecord} [check]
 */

/**
 * Why a member takes nothing now ("full", "unreachable since ...", "failing its check: ..."), or
 * undefined when it can take a run.
 * @param {Candidate} member @param {number} now
 */
export function unplaceable(member, now) {
	if (
		member.check &&
		!member.check.ok &&
		(!member.health || member.health.at < member.check.at || !member.health.reachable)
	)
		return `failing its check: ${member.check.failing ?? "see targets check"}`;
	if (member.health && !member.health.reachable && now - member.health.at < UNREACHABLE_HOLD_MS)
		return `unreachable: ${member.health.reason ?? "no answer"}`;
	if (member.health?.failing && now - (member.health.failingAt ?? 0) < UNREACHABLE_HOLD_MS)
		return `failing: ${member.health.failing}`;
	if (member.live >= member.max) return "full";
	return undefined;
}

/** @param {Candidate} member */
const loadPerCore = (member) =>
	member.health?.load === undefined ? Infinity : member.health.load / Math.max(1, member.health.cpus ?? 1);

/**
 * The members a run may go to, best first.
 * @param {Candidate[]} members in the pool's order @param {number} [now]
 * @returns {Candidate[]}
 */
export function placementOrder(members, now = Date.now()) {
	return members
		.map((member, index) => ({ member, index }))
		.filter(({ member }) => unplaceable(member, now) === undefined)
		.sort(
			(a, b) =>
				b.member.max - b.member.live - (a.member.max - a.member.live) ||
				loadPerCore(a.member) - loadPerCore(b.member) ||
				a.index - b.index,
		)
		.map(({ member }) => member);
}
