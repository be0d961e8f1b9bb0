// What the board knows of a target's health, for a pool's placement and the targets view: whether it
// answered (its link says, as its channel opens and drops), the load its far side reported at its last
// frame, and the last `targets check`. Two files, one writer each, under <store>/targets/<name>/link/:
// health.json (the target's link) and check.json (targets check). Missing: nothing known yet.
import { join } from "node:path";
import { ensureDir, readJsonObject, writeJsonAtomic } from "../store/fs-util.mjs";
import { TARGET_NAME } from "./vocabulary.mjs";

/**
 * @typedef {object} TargetHealth
 * @property {number} at             when the link last wrote it
 * @property {boolean} reachable
 * @property {number} [since]        unreachable since (ms)
 * @property {string} [reason]       why not (ssh's words)
 * @property {number} [load]         1-minute load average at the far side, at its last frame
 * @property {number} [cpus]
 * @property {number} [loadAt]
 * @property {string} [failing]      a run could not start there lately (it answered, but refused): why
 * @property {number} [failingAt]
 */

/** @typedef {{ at: number, ok: boolean, failing?: string }} TargetCheckRecord */

/** A target's link dir: its process record, its lock, its runs, its health. @param {string} storeDir @param {string} name */
export function linkDir(storeDir, name) {
	if (!TARGET_NAME.test(name)) throw new Error(`not a target name: ${JSON.stringify(name)}`);
	return join(storeDir, "targets", name, "link");
}

/** @param {unknown} value */
const num = (value) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);

/** @param {string} storeDir @param {string} name @returns {TargetHealth | undefined} */
export function readHealth(storeDir, name) {
	const value = readJsonObject(join(linkDir(storeDir, name), "health.json"));
	const at = num(value?.at);
	if (!value || at === undefined || typeof value.reachable !== "boolean") return undefined;
	/** @type {TargetHealth} */
	const health = { at, reachable: value.reachable };
	for (const key of /** @type {const} */ (["since", "load", "cpus", "loadAt", "failingAt"])) {
		const n = num(value[key]);
		if (n !== undefined) health[key] = n;
	}
	if (typeof value.reason === "string") health.reason = value.reason.slice(0, 500);
	if (typeof value.failing === "string") health.failing = value.failing.slice(0, 500);
	return health;
}

/** The link's record (its one writer). @param {string} storeDir @param {string} name @param {TargetHealth} health */
export function writeHealth(storeDir, name, health) {
	const dir = linkDir(storeDir, name);
	ensureDir(dir);
	writeJsonAtomic(join(dir, "health.json"), health);
}

/** @param {string} storeDir @param {string} name @returns {TargetCheckRecord | undefined} */
export function readCheck(storeDir, name) {
	const value = readJsonObject(join(linkDir(storeDir, name), "check.json"));
	const at = num(value?.at);
	if (!value || at === undefined || typeof value.ok !== "boolean") return undefined;
	return { at, ok: value.ok, ...(typeof value.failing === "string" ? { failing: value.failing.slice(0, 500) } : {}) };
}

/**
 * What `targets check` found, kept for placement: a member failing its check takes nothing until a
 * check passes. @param {string} storeDir @param {string} name @param {import("../kinds/kind.mjs").CheckItem[]} items
 */
export function recordCheck(storeDir, name, items) {
	const failed = items.find((item) => !item.ok);
	const dir = linkDir(storeDir, name);
	ensureDir(dir);
	writeJsonAtomic(join(dir, "check.json"), {
		at: Date.now(),
		ok: !failed,
		...(failed ? { failing: `${failed.name}: ${failed.detail}` } : {}),
	});
}
