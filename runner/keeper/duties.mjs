// What the store's keeper does (keeper.mjs): a short list of duties, each asked every pass whether it
// has work (`wanted`, cheap: a few directory listings and small reads) and, when it has, given a pass.
// The keeper lives while any duty is wanted.
import { notifyDuty } from "../notify/notify-duty.mjs";
import { searchDuty } from "../search/search-duty.mjs";
import { recoveryDuty } from "./recovery-duty.mjs";

/**
 * @typedef {object} Duty
 * @property {string} name
 * @property {(storeRoot: string) => boolean} wanted
 * @property {(storeRoot: string, ctx: import("./recovery-duty.mjs").KeeperContext) => Promise<void> | void} pass
 * @property {(storeRoot: string, ctx: import("./recovery-duty.mjs").KeeperContext) => void} [start]  once, in the keeper, as it starts
 */

/** @type {Duty[]} */
export const DUTIES = [recoveryDuty, notifyDuty, searchDuty];

/** Whether any duty has work in the store. @param {string} storeRoot @param {Duty[]} [duties] */
export function keeperWanted(storeRoot, duties = DUTIES) {
	return duties.some((duty) => {
		try {
			return duty.wanted(storeRoot);
		} catch {
			return false;
		}
	});
}
