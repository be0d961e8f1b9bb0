// <store>/config.json: the board's settings that every pi process and runner shares, the local
// concurrency limit and the targets; its one reader and writer. Read shape-checked on every use (each
// target against its kind's fields, runner/kinds/), changed only under <store>/config.lock by temp +
// rename, so two pi processes never lose each other's change. The queue reads just the limits, at every
// pump: a limit changed in the settings applies at once to what is queued, and a file of the wrong
// shape stops the queue with its path and field.
import { join } from "node:path";
import { groupError, isTargetName, membersOf, targetError } from "../kinds/kinds.mjs";
import { parseJsonStrict, writeJsonAtomic } from "../store/fs-util.mjs";
import { withLockFile } from "../store/row-lock.mjs";
import { BoardError } from "./reasons.mjs";
import { LOCAL_TARGET } from "./vocabulary.mjs";
import { readTextNoFollow } from "../store/safe-read.mjs";

/** @typedef {import("../../src/board/engine/types.ts").BoardConfig} BoardConfig */

export const CONFIG_FILE = "config.json";

/** @param {string} storeRoot */
export const configPath = (storeRoot) => join(storeRoot, CONFIG_FILE);

/** @param {unknown} value */
const isLimit = (value) => typeof value === "number" && Number.isInteger(value) && value >= 1;

/** @param {unknown} value */
const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * The file's value, or why it has none (missing: undefined).
 * @param {string} path @returns {{ value?: unknown, error?: string }}
 */
function readValue(path) {
	let text;
	try {
		text = readTextNoFollow(path);
	} catch (error) {
		if (/** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT") return {};
		return { error: `cannot read ${path}: ${error instanceof Error ? error.message : String(error)}` };
	}
	try {
		return { value: parseJsonStrict(text, path) };
	} catch (error) {
		return { error: error instanceof Error ? error.message : String(error) };
	}
}

/**
 * What is wrong with a config, "/targets/dev/max must be a whole number >= 1", or undefined. `limits`:
 * only what the queue needs (names and limits), so an older runner still pumps a newer board's config.
 * @param {unknown} value @param {{ limits?: boolean }} [options]
 */
function configError(value, options = {}) {
	if (!isObject(value)) return "/ must be object";
	const config = /** @type {Record<string, unknown>} */ (value);
	if (!options.limits && typeof config.version !== "number") return "/version must be number";
	if (config.maxRunning !== undefined && !isLimit(config.maxRunning)) return "/maxRunning must be a whole number >= 1";
	if (!isObject(config.targets)) return "/targets must be object";
	for (const [name, target] of Object.entries(/** @type {Record<string, unknown>} */ (config.targets))) {
		if (!isTargetName(name))
			return `/targets/${name} is not a target name (1-32 of a-z, 0-9, "-"; not ${LOCAL_TARGET})`;
		const error = options.limits
			? isLimit(/** @type {{ max?: unknown } | undefined} */ (target)?.max)
				? undefined
				: "/max must be a whole number >= 1"
			: targetError(target);
		if (error) return `/targets/${name}${error.startsWith("/") ? error : ` ${error}`}`;
	}
	if (options.limits) return undefined;
	const targets = /** @type {Record<string, import("../../src/board/engine/types.ts").TargetConfig>} */ (
		config.targets
	);
	for (const [name, target] of Object.entries(targets)) {
		const error = groupError(target, targets);
		if (error) return `/targets/${name}/members: ${error}`;
	}
	return undefined;
}

/**
 * The board's config; missing is empty, a wrong one an error (code "invalid") naming the path and field.
 * @param {string} storeDir @returns {BoardConfig}
 */
export function readBoardConfig(storeDir) {
	const path = configPath(storeDir);
	const read = readValue(path);
	if (read.error) throw new BoardError("invalid", read.error);
	if (read.value === undefined) return { version: 1, targets: {} };
	const error = configError(read.value);
	if (error) throw new BoardError("invalid", `${path}: ${error}`);
	return /** @type {BoardConfig} */ (read.value);
}

/**
 * What the queue needs: the concurrency limits (`local`, undefined: the caller's default; one per
 * target), the members of each group target (a pool: its runs are placed on them), and the members'
 * configs a placement snapshots into the run.
 * @param {string} storeRoot
 * @returns {{ local?: number, targets: Map<string, number>, groups: Map<string, string[]>, configs: Map<string, import("../../src/board/engine/types.ts").TargetConfig>, error?: string }}
 */
export function readLimits(storeRoot) {
	/** @type {Map<string, number>} */
	const targets = new Map();
	/** @type {Map<string, string[]>} */
	const groups = new Map();
	/** @type {Map<string, import("../../src/board/engine/types.ts").TargetConfig>} */
	const configs = new Map();
	const path = configPath(storeRoot);
	const read = readValue(path);
	if (read.error) return { targets, groups, configs, error: read.error };
	if (read.value === undefined) return { targets, groups, configs };
	const error = configError(read.value, { limits: true });
	if (error) return { targets, groups, configs, error: `${path}: ${error}` };
	const config =
		/** @type {{ maxRunning?: number, targets: Record<string, import("../../src/board/engine/types.ts").TargetConfig> }} */ (
			read.value
		);
	for (const [name, target] of Object.entries(config.targets)) {
		targets.set(name, target.max);
		configs.set(name, target);
		let members;
		try {
			members = membersOf(target);
		} catch {
			// A kind this runner does not know: not a group it can place.
		}
		if (members) groups.set(name, members);
	}
	return { local: config.maxRunning, targets, groups, configs };
}

/**
 * Changes the config under its lock: re-read, change, check the result's shape, write. `change` may
 * throw (a refusal) and then nothing is written. Returns the config written.
 * @param {string} storeDir @param {(config: BoardConfig) => void} change @returns {Promise<BoardConfig>}
 */
export async function updateBoardConfig(storeDir, change) {
	return withLockFile(join(storeDir, "config.lock"), () => {
		const config = readBoardConfig(storeDir);
		change(config);
		const path = configPath(storeDir);
		const error = configError(config);
		if (error) throw new BoardError("invalid", `${path}: ${error}`);
		writeJsonAtomic(path, config);
		return config;
	});
}

/** A new target's name: a path component and a filter word, not "local", not taken. @param {BoardConfig} config @param {unknown} name */
export function checkNewTargetName(config, name) {
	if (name === LOCAL_TARGET)
		throw new BoardError("invalid", `"${LOCAL_TARGET}" is this machine and always exists; choose another name`);
	if (typeof name !== "string" || !isTargetName(name))
		throw new BoardError(
			"invalid",
			`target name must be 1-32 of a-z, 0-9 and "-", starting with a letter or digit (got ${JSON.stringify(name)})`,
		);
	if (config.targets[name])
		throw new BoardError(
			"invalid",
			`a target named ${name} exists already (remove it first, or choose another name)`,
		);
	return name;
}
