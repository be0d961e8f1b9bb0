// A pool of targets as a kind of target (kind.mjs): `targets add build --pool box1,box2,box3`. A pool
// has no far side of its own: the queue places each of its runs, when it claims it, on the member with
// the most free slots (life/placement.mjs), and from then on the run is that member's (its host is
// fixed; the row says `on build/box2`). Its limit is its own too (default: its members' limits added
// up), so a burst can be as large as the pool. A member is any target that is not itself a pool.
import { invalid } from "../kind.mjs";
import { TARGET_NAME } from "../../life/vocabulary.mjs";

/** @param {unknown} value @returns {string[]} */
const memberList = (value) => (Array.isArray(value) ? value.map(String) : []);

/** @type {import("../kind.mjs").TargetKind} */
export const poolKind = {
	kind: "pool",
	what: "pool",
	fields: {
		members: {
			type: "words",
			required: true,
			flag: "--pool",
			value: "<target>,<target>,...",
			selects: true,
			check: (value) => {
				const names = memberList(value);
				if (names.length === 0) return "must name at least one target";
				if (new Set(names).size !== names.length) return "names a target twice";
				return names.every((name) => TARGET_NAME.test(name) && name !== "local")
					? undefined
					: "must be target names (not local)";
			},
			input: (value) => {
				const names = String(value)
					.split(",")
					.map((name) => name.trim())
					.filter(Boolean);
				if (names.length === 0) throw invalid("--pool takes the names of its targets: --pool box1,box2,box3");
				for (const name of names)
					if (!TARGET_NAME.test(name) || name === "local")
						throw invalid(
							`--pool: ${JSON.stringify(name)} is not a target's name (a pool's members are targets added before it)`,
						);
				return [...new Set(names)];
			},
		},
	},
	members: (config) => memberList(config.members),
	describe: (config) => `pool of ${memberList(config.members).join(", ")}`,
	async check(target, options) {
		// Each member's own check (its own --env, its result kept for placement: a member failing it takes
		// nothing), its items named by the member. The board checks a member; this kind knows no other kind.
		if (!options.checkMember) throw new Error(`${target.name} is a pool: its members are checked by the board`);
		/** @type {import("../kind.mjs").CheckItem[]} */
		const items = [];
		for (const name of memberList(target.members)) {
			const checked = await options.checkMember(name);
			items.push(...checked.map((item) => ({ ...item, name: `${name}: ${item.name}` })));
		}
		return items;
	},
	async driver(target) {
		throw new Error(`${target.name} is a pool: its runs run on its members (placed when they start)`);
	},
};
