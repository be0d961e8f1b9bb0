// <store>/policy.json: who answers a row's routine questions (the supervisor's model; absent: nobody,
// the default) and how much the board may spend per day, in all and per target. Every runner reads it
// when a question comes or a turn ends; the board's settings (S) change it under <store>/policy.lock by
// temp + rename. Missing is "everything off"; a file of the wrong shape is an error naming path and
// field, and then nothing of it applies (no supervisor answers, no board budget pauses).
import { join } from "node:path";
import { ensureDir, parseJsonStrict, writeJsonAtomic } from "../store/fs-util.mjs";
import { withLockFile } from "../store/row-lock.mjs";
import { limitError } from "./budget.mjs";
import { readTextNoFollow } from "../store/safe-read.mjs";

/**
 * @typedef {object} Policy
 * @property {number} version
 * @property {{ model: string, breaker?: number }} [supervisor]   breaker: escalations in a row that stop answering for a row
 * @property {{ day?: import("./budget.mjs").Limit, targets?: Record<string, import("./budget.mjs").Limit> }} [budgets]
 */

export const POLICY_FILE = "policy.json";

/** @param {string} storeDir */
export const policyPath = (storeDir) => join(storeDir, POLICY_FILE);

/** @param {unknown} value */
const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/** The first shape error ("/supervisor/model must be string"), or undefined. @param {unknown} value */
export function policyError(value) {
	if (!isObject(value)) return "/ must be object";
	const policy = /** @type {Record<string, unknown>} */ (value);
	if (typeof policy.version !== "number") return "/version must be number";
	if (policy.supervisor !== undefined) {
		if (!isObject(policy.supervisor)) return "/supervisor must be object";
		const model = /** @type {Record<string, unknown>} */ (policy.supervisor).model;
		if (typeof model !== "string" || !model.trim()) return "/supervisor/model must be a model name";
		const breaker = /** @type {Record<string, unknown>} */ (policy.supervisor).breaker;
		if (breaker !== undefined && !(Number.isInteger(breaker) && Number(breaker) >= 1))
			return "/supervisor/breaker must be a whole number from 1";
	}
	if (policy.budgets !== undefined) {
		if (!isObject(policy.budgets)) return "/budgets must be object";
		const budgets = /** @type {Record<string, unknown>} */ (policy.budgets);
		if (budgets.day !== undefined) {
			const error = limitError(budgets.day);
			if (error) return `/budgets/day ${error}`;
		}
		if (budgets.targets !== undefined) {
			if (!isObject(budgets.targets)) return "/budgets/targets must be object";
			for (const [name, limit] of Object.entries(/** @type {Record<string, unknown>} */ (budgets.targets))) {
				const error = limitError(limit);
				if (error) return `/budgets/targets/${name} ${error}`;
			}
		}
	}
	return undefined;
}

/**
 * The policy; `error` when the file cannot be read or has the wrong shape (then `policy` is empty).
 * @param {string} storeDir
 * @returns {{ policy: Policy, error?: string }}
 */
export function readPolicy(storeDir) {
	const path = policyPath(storeDir);
	let text;
	try {
		text = readTextNoFollow(path);
	} catch (error) {
		if (/** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT") return { policy: { version: 1 } };
		return {
			policy: { version: 1 },
			error: `cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`,
		};
	}
	let value;
	try {
		value = parseJsonStrict(text, path);
	} catch (error) {
		return { policy: { version: 1 }, error: error instanceof Error ? error.message : String(error) };
	}
	const error = policyError(value);
	return error ? { policy: { version: 1 }, error: `${path}: ${error}` } : { policy: /** @type {Policy} */ (value) };
}

/**
 * Changes the policy under its lock: re-read, change, check, write. A file of the wrong shape is
 * refused (never overwritten): the error names it.
 * @param {string} storeDir @param {(policy: Policy) => void} change @returns {Promise<Policy>}
 */
export async function updatePolicy(storeDir, change) {
	ensureDir(storeDir);
	return withLockFile(join(storeDir, "policy.lock"), () => {
		const read = readPolicy(storeDir);
		if (read.error) throw new Error(read.error);
		const policy = read.policy;
		change(policy);
		const error = policyError(policy);
		if (error) throw new Error(`${policyPath(storeDir)}: ${error}`);
		writeJsonAtomic(policyPath(storeDir), policy);
		return policy;
	});
}
