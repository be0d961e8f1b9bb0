// A run's launch at a target, on the target's side, in the steps every channel takes (host-agent
// `run` for one run, `link` for all of a link's runs): what the host lacks (the session, the base
// commit), then prepare and start. The workspace is cut from the host's mirror under the mirror's
// lock, which a push into that mirror holds too: git's connectivity check reads every worktree's
// HEAD, and `worktree add` writes a placeholder HEAD first ("bad object worktrees/<id>/HEAD").
import { existsSync } from "node:fs";
import { join } from "node:path";
import { withLockFile } from "../store/row-lock.mjs";
import { targetMirrorPath, targetPaths } from "../store/store-layout.mjs";
import { BoardError } from "../life/reasons.mjs";
import { farRunStarted, prepareRun, spaceProblem, startRun } from "./far-run.mjs";
import { ensureMirror, revParse } from "./git-workspace.mjs";
import { piCheckedAsync } from "./pi-check.mjs";
import { fileDigest, sameDigest } from "./session-travel.mjs";

/** How long a launch waits for a push into the same mirror to finish. */
const MIRROR_WAIT_MS = 300_000;

/** The lock a push and a worktree's creation take in a bare mirror. @param {string} mirror */
export const mirrorLockPath = (mirror) => join(mirror, "agent-board.lock");

/**
 * Runs `fn` holding the mirror's lock (created first when missing).
 * @template T @param {string} mirror @param {() => T | Promise<T>} fn @returns {Promise<T>}
 */
export async function withMirrorLock(mirror, fn) {
	ensureMirror(mirror);
	return withLockFile(mirrorLockPath(mirror), fn, {
		timeoutMs: MIRROR_WAIT_MS,
		what: "a push into the host's mirror takes too long",
	});
}

/**
 * What the host needs before this run can start: nothing when its runner already started (a link
 * that lost its channel mid-launch), else the session when the host's copy differs and the base
 * commit when the mirror lacks it. Throws the reason a run cannot start here, with its code (another
 * pi: start-failed; too little space for the run: disk-full).
 * @param {string} dir @param {import("./far-run.mjs").FarRunConfig} config
 * @returns {Promise<{ started: boolean, want: string[], runDir: string, session: string }>}
 */
export async function launchNeeds(dir, config) {
	const paths = targetPaths(dir, config.rowId, config.runId);
	if (farRunStarted(paths.run)) return { started: true, want: [], runDir: paths.run, session: paths.session };
	// Asked without blocking: on a link's channel every other run of the host goes on meanwhile.
	const pi = await piCheckedAsync(dir, config.piCommand ?? ["pi"]);
	if (!pi.ok) throw new BoardError("start-failed", pi.reason);
	const space = spaceProblem(dir);
	if (space) throw new BoardError("disk-full", space);
	const mirror = targetMirrorPath(dir, config.repoKey);
	/** @type {string[]} */
	const want = [];
	if (config.session !== null && !sameDigest(fileDigest(paths.session), config.session)) want.push("session");
	if (!existsSync(join(mirror, "HEAD")) || !revParse(mirror, `${config.base}^{commit}`)) want.push("base");
	return { started: false, want, runDir: paths.run, session: paths.session };
}

/**
 * Prepares the run (its workspace under the mirror's lock) and starts its runner, unless the link gave
 * the launch up meanwhile (`wanted`: a stop during a launch that took too long).
 * @param {string} dir @param {import("./far-run.mjs").FarRunConfig} config @param {() => boolean} [wanted]
 */
export async function launchRun(dir, config, wanted = () => true) {
	const paths = targetPaths(dir, config.rowId, config.runId);
	if (farRunStarted(paths.run)) return paths.run;
	// Looked at again under the lock: another launch of this run (a relink's) may have started it while
	// this one waited, and a second prepare would move the session its pi just made aside.
	await withMirrorLock(targetMirrorPath(dir, config.repoKey), () => {
		if (farRunStarted(paths.run)) return;
		prepareRun(dir, config);
		if (!wanted()) throw new Error("the link gave this launch up");
		startRun(paths.run);
	});
	return paths.run;
}
