// Starting the store's keeper (keeper.mjs) when it has work and none runs: called by whoever queues
// (the board's pump after a dispatch, a runner or a link at its end). Cheap when one runs: one read of
// keeper.json and one /proc stat. Two callers at once may both start one; keeper.json's O_EXCL create
// lets one of them keep, the other exits at once.
import { spawn } from "node:child_process";
import { accessSync, closeSync, constants } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { openAppend } from "../store/append-file.mjs";
import { RUN_TAG } from "../store/proc.mjs";
import { keeperWanted } from "./duties.mjs";
import { keeperAlive } from "./keeper-file.mjs";

export const KEEPER_PATH = resolve(dirname(fileURLToPath(import.meta.url)), "keeper.mjs");

/**
 * Starts the store's keeper unless one runs or nothing needs one. Returns whether it spawned one.
 * AGENT_BOARD_KEEPER=off in `env` starts none (a test that moves the queue by hand).
 * @param {string} storeRoot
 * @param {{ node: string, env: NodeJS.ProcessEnv, maxConcurrent: number }} options
 */
export function ensureKeeper(storeRoot, options) {
	if (options.env.AGENT_BOARD_KEEPER === "off") return false;
	if (keeperAlive(storeRoot) || !writable(storeRoot) || !keeperWanted(storeRoot)) return false;
	const env = { ...options.env };
	delete env[RUN_TAG];
	/** @type {number | "ignore"} */
	let logFd = "ignore";
	try {
		logFd = openAppend(join(storeRoot, "keeper.log"));
	} catch {
		// A full disk, or something planted as keeper.log: the keeper runs without a log (it is what retries the queue when space returns).
	}
	try {
		const child = spawn(options.node, [KEEPER_PATH, storeRoot, String(options.maxConcurrent)], {
			detached: true,
			stdio: ["ignore", logFd, logFd],
			cwd: storeRoot,
			env,
		});
		child.on("error", () => undefined);
		child.unref();
		return true;
	} catch {
		return false;
	} finally {
		if (typeof logFd === "number") closeSync(logFd);
	}
}

/** A store this process cannot write gets no keeper (it could write nothing there). @param {string} storeRoot */
function writable(storeRoot) {
	try {
		accessSync(storeRoot, constants.W_OK);
		return true;
	} catch {
		return false;
	}
}
