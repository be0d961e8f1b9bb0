// A pool's run placed on one of its members when the queue claims it (docs/engine-targets.md, "Pools"):
// a slot of the best member is claimed (placement.mjs orders them; one filled meanwhile is passed for
// the next), and once the run is the claimer's, its run.json names the member (its config as it is now,
// with the pool's --env names added) and the pool it came from. From then on the run is the member's:
// its link, its slot, its host, for good.
import { join } from "node:path";
import { ensureDir, writeJsonAtomic } from "../store/fs-util.mjs";
import { placementOrder } from "./placement.mjs";
import { liveSlots, slotsOf, tryClaimSlot } from "./slots.mjs";
import { readCheck, readHealth } from "./target-health.mjs";
import { readTextNoFollow } from "../store/safe-read.mjs";

/**
 * Claims a slot of the member a pool's run goes to, or undefined when none can take it now.
 * @param {string} storeRoot @param {string[]} members @param {Map<string, number>} limits
 * @param {import("./slots.mjs").SlotOwner} owner @param {import("./slots.mjs").TakeTurns} [turns] the queue's turns (a stale slot is broken in one)
 * @param {Set<string>} [drained] members that take nothing new
 * @returns {{ member: string, slot: string } | undefined}
 */
export function claimMemberSlot(storeRoot, members, limits, owner, turns, drained) {
	const now = Date.now();
	const candidates = members.flatMap((name) => {
		const max = limits.get(name);
		// A drained member (targets drain) takes nothing new.
		if (max === undefined || drained?.has(name)) return [];
		const slots = slotsOf(storeRoot, name);
		const health = readHealth(storeRoot, name);
		const check = readCheck(storeRoot, name);
		return [
			{
				name,
				max,
				live: liveSlots(slots.dir, max, slots.holds),
				...(health ? { health } : {}),
				...(check ? { check } : {}),
			},
		];
	});
	for (const member of placementOrder(candidates, now)) {
		const slots = slotsOf(storeRoot, member.name);
		ensureDir(slots.dir);
		const slot = tryClaimSlot(slots.dir, member.max, owner, slots.holds, turns);
		if (slot) return { member: member.name, slot };
	}
	return undefined;
}

/**
 * The claimed run is the member's now: its run.json (written by the claimer, which owns the run until
 * its link takes it) names the member's config and the pool. Throws when the member is gone.
 * @param {string} runDir @param {string} pool @param {string} member
 * @param {Map<string, import("../../src/board/engine/types.ts").TargetConfig>} configs
 */
export function placeRun(runDir, pool, member, configs) {
	const path = join(runDir, "run.json");
	const config = JSON.parse(readTextNoFollow(path));
	const memberConfig = configs.get(member);
	if (!memberConfig) throw new Error(`${member}, a member of ${pool}, is not a target any more`);
	const poolEnv = Array.isArray(configs.get(pool)?.env) ? /** @type {string[]} */ (configs.get(pool)?.env) : [];
	const env = [...new Set([...memberConfig.env, ...poolEnv])];
	const { drained: _drained, ...snapshot } = memberConfig;
	writeJsonAtomic(path, { ...config, target: { ...snapshot, env, name: member }, pool });
}
