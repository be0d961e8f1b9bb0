// <store>/config.json: the board's settings that every pi process and runner shares, the local
// concurrency limit and the targets. Its shape is defined once, in src/board/engine/schemas.ts (typebox), and
// changed only by src/board/targets/board-config.ts under <store>/config.lock. The queue reads just the
// limits, here, at every pump (the runner cannot load typebox): a limit changed in the settings applies
// at once to what is queued. A file of the wrong shape stops the queue with its path and field.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseJsonStrict } from "../store/fs-util.mjs";

export const CONFIG_FILE = "config.json";
/** The target every board has: this machine, the queue's own slots. */
export const LOCAL_TARGET = "local";
/** A target's name: a path component and a word in the filter (`on:<name>`). */
export const TARGET_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** @param {string} storeRoot */
export const configPath = (storeRoot) => join(storeRoot, CONFIG_FILE);

/** @param {unknown} value */
const isLimit = (value) => typeof value === "number" && Number.isInteger(value) && value >= 1;

/**
 * The concurrency limits: `local` (undefined: the caller's default) and one per target.
 * @param {string} storeRoot
 * @returns {{ local?: number, targets: Map<string, number>, error?: string }}
 */
export function readLimits(storeRoot) {
	/** @type {Map<string, number>} */
	const targets = new Map();
	const path = configPath(storeRoot);
	let text;
	try {
		text = readFileSync(path, "utf8");
	} catch (error) {
		if (/** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT") return { targets };
		return { targets, error: `cannot read ${path}: ${error instanceof Error ? error.message : String(error)}` };
	}
	/** @type {unknown} */
	let value;
	try {
		value = parseJsonStrict(text, path);
	} catch (error) {
		return { targets, error: error instanceof Error ? error.message : String(error) };
	}
	const config = /** @type {{ maxRunning?: unknown, targets?: unknown }} */ (value && typeof value === "object" && !Array.isArray(value) ? value : {});
	if (value === null || typeof value !== "object" || Array.isArray(value)) return { targets, error: `${path}: / must be object` };
	if (config.maxRunning !== undefined && !isLimit(config.maxRunning)) return { targets, error: `${path}: /maxRunning must be a whole number >= 1` };
	const entries = config.targets;
	if (entries === null || typeof entries !== "object" || Array.isArray(entries)) return { targets, error: `${path}: /targets must be object` };
	for (const [name, target] of Object.entries(entries)) {
		const max = /** @type {{ max?: unknown }} */ (target ?? {}).max;
		if (!TARGET_NAME.test(name) || name === LOCAL_TARGET) return { targets, error: `${path}: /targets/${name} is not a target name` };
		if (!isLimit(max)) return { targets, error: `${path}: /targets/${name}/max must be a whole number >= 1` };
		targets.set(name, /** @type {number} */ (max));
	}
	return { local: /** @type {number | undefined} */ (config.maxRunning), targets };
}
