// One run as its target's link owns it (docs/engine-targets.md "The link"): launched through the
// target's driver (driver.mjs, one per target for all of its runs), its local run dir kept a mirror of
// the far one (link-mirror.mjs), its local inbox forwarded (link-inbox.mjs), its code fetched back into
// its worktree, its connection taken up again with backoff when the target cannot be reached (the run
// goes on there), and its end recorded, then `onDone` (the link frees its slot and pumps). A run taken
// over by a new link resumes where the local files stop. Its end is failed when the link did not mirror
// it whole, or when the far side says the run's files there are gone; a far error before the far runner
// started is the launch's failure, with its code.
import { existsSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { homedir } from "node:os";
import { writeJsonAtomic } from "../store/fs-util.mjs";
import { recordStartFailure } from "../life/run-end.mjs";
import { isReasonCode } from "../life/reasons.mjs";
import { resetRelinks } from "../life/relink.mjs";
import { portableRun, readRunConfig } from "../life/run-config.mjs";
import { initialStatus } from "../life/state-rules.mjs";
import { membersOf, targetError } from "../kinds/kinds.mjs";
import { readBoardConfig } from "../life/board-config.mjs";
import { returnToPool } from "../life/pool-return.mjs";
import { git } from "../far/git-workspace.mjs";
import { makeRunWorktree, runCwdIn } from "../life/row-worktree.mjs";
import { fetchSync } from "./fetch-sync.mjs";
import { openLinkBudget } from "./link-budget.mjs";
import { openInbox } from "./link-inbox.mjs";
import { openMirror } from "./link-mirror.mjs";
import { linkSupervisor } from "./link-supervisor.mjs";
import { readJsonObject } from "../store/safe-read.mjs";

const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
/** Launch attempts on an unreachable target before the run fails (nothing started there yet). */
const LAUNCH_ATTEMPTS = 3;
/** How long a launch may go on after a stop came, before the link gives it up and stops what started. */
const STOP_DURING_LAUNCH_MS = 10_000;

/**
 * @typedef {object} RunLinkOptions
 * @property {string} runDir
 * @property {(target: import("./driver.mjs").TargetSnapshot) => Promise<import("./driver.mjs").TargetDriver>} driverFor  the target's one driver
 * @property {(text: string) => void} log
 * @property {(how: { failed?: string, requeued?: boolean }) => void} onDone  the end is recorded (or the run could not start: why; or it went back to its pool's queue)
 * @property {(news: { started?: boolean, failed?: string }) => void} [onTarget]  what a launch says of the target: a run started there, or could not
 */

/**
 * The run's config, checked: run.json must be this run's, on a target, with its repository and worktree.
 * @param {string} runDir
 */
export function linkRunConfig(runDir) {
	const configPath = join(runDir, "run.json");
	const config = readRunConfig(configPath);
	if (resolve(config.runDir) !== resolve(runDir))
		throw new Error(`${configPath}: /runDir is not the directory of run.json`);
	const error = targetError(config.target, { named: true });
	if (error) throw new Error(`${configPath}: /target ${error}`);
	if (!config.repo || !config.worktree) throw new Error(`${configPath}: a target run needs /repo and /worktree`);
	return config;
}

/**
 * Takes a run over. Resolves once it is followed (or has failed to start); the run's end comes later
 * through `onDone`. `stop()` lets go of it without ending it (the link leaves; the run goes on there).
 * @param {RunLinkOptions} options
 */
export async function openRunLink({ runDir, driverFor, log, onDone, onTarget }) {
	/** @type {import("../life/run-config.mjs").RunConfig} */
	let config;
	try {
		config = linkRunConfig(runDir);
	} catch (error) {
		const reason = error instanceof Error ? error.message : String(error);
		recordStartFailure(runDir, reason);
		onDone({ failed: reason });
		return { release: () => undefined };
	}
	const target = /** @type {import("./driver.mjs").TargetSnapshot} */ (config.target);
	const worktree = String(config.worktree);
	const say = (/** @type {string} */ text) => log(`${config.rowId}/${config.runId}: ${text}`);

	/** link.json: whether the far run has started (a new link follows it instead of launching). */
	const statePath = join(runDir, "link.json");
	// None yet: a first start.
	let started = readJsonObject(statePath)?.started === true;
	/** @returns {import("../life/state-rules.mjs").RunStatus} */
	const localStatus = () =>
		/** @type {import("../life/state-rules.mjs").RunStatus | undefined} */ (
			readJsonObject(join(runDir, "status.json"))
		) ?? initialStatus(config.runId, config.rowId, config.createdAt);

	// The run's questions are decided here, as a local runner's are (link-supervisor.mjs).
	const supervisor = linkSupervisor(config, target.name);
	const mirror = openMirror({
		onWrite: supervisor.observe,
		storeDir: config.storeDir,
		rowId: config.rowId,
		runId: config.runId,
		runDir,
		sessionFile: config.sessionFile,
		target: target.name,
		status: localStatus(),
		worktree,
	});
	supervisor.attach(mirror);
	// Budgets: the far runner holds each turn's end, this machine's gate decides it (link-budget.mjs).
	const budget = openLinkBudget(config, target.name);
	let finishing = false;
	/** @type {ReturnType<typeof setTimeout> | undefined} */
	let stopTimer;
	const inbox = openInbox(runDir, {
		onStop: () => {
			mirror.stopRequested();
			stopWhileLaunching();
		},
	});
	let released = false;
	/** @type {import("./driver.mjs").TargetDriver | undefined} */
	let driver;

	/** @param {{ failed?: string, requeued?: boolean }} how */
	const done = (how) => {
		if (released) return;
		released = true;
		supervisor.close();
		if (stopTimer) clearTimeout(stopTimer);
		budget.close();
		try {
			if (driver) driver.finish?.(run);
		} catch (error) {
			say(`after the end: ${error instanceof Error ? error.message : String(error)}`);
		}
		// Back in the queue, its messages wait for the member that takes it next.
		if (how.requeued) inbox.close();
		else inbox.finish();
		onDone(how);
	};

	// A first run's worktree is made here, not by the dispatch (runner/life/row-worktree.mjs).
	let made = false;
	if (!started) {
		try {
			made = await makeRunWorktree(config);
		} catch (error) {
			const reason = error instanceof Error ? error.message : String(error);
			finishing = true;
			mirror.fail(reason, "start-failed");
			done({ failed: reason });
			return { release: () => undefined };
		}
	}
	if (!existsSync(worktree)) {
		const reason = `the row's worktree is gone: ${worktree}`;
		finishing = true;
		mirror.fail(reason);
		done({ failed: reason });
		return { release: () => undefined };
	}
	if (!started && mirror.status().stopRequested) {
		// Stopped while its worktree was being made: nothing started at the target.
		finishing = true;
		mirror.stopped();
		done({});
		return { release: () => undefined };
	}

	/** @type {import("./driver.mjs").LinkRun} */
	const run = {
		target,
		storeDir: config.storeDir,
		rowId: config.rowId,
		runId: config.runId,
		runDir,
		sessionFile: config.sessionFile,
		repo: String(config.repo),
		worktree,
		base: made && config.worktreeBase ? config.worktreeBase : git(worktree, ["rev-parse", "HEAD"]),
		subdir: relative(worktree, runCwdIn({ cwd: config.cwd, worktree })),
		agentDir: config.agentDir ?? process.env.PI_CODING_AGENT_DIR ?? join(homedir(), ".pi", "agent"),
		// --env values come from the environment the link inherited (the board's), never from argv.
		forwarded: Object.fromEntries(
			target.env.flatMap((name) => (process.env[name] === undefined ? [] : [[name, String(process.env[name])]])),
		),
		// What the far side's run.json is made of: the part of this one that travels.
		config: { ...portableRun(config), budgetBy: "link", repoKey: "", base: "", session: null },
	};
	run.config.base = run.base;
	try {
		driver = await driverFor(target);
	} catch (error) {
		const reason = `cannot start on ${target.name}: ${error instanceof Error ? error.message : String(error)}`;
		finishing = true;
		mirror.fail(reason);
		done({ failed: reason });
		return { release: () => undefined };
	}
	const theDriver = driver;
	if (mirror.status().stopRequested) stopWhileLaunching();

	const gitSync = fetchSync({
		fetch: () => theDriver.fetchBack(run),
		worktree,
		rowId: run.rowId,
		say,
		holding: (waiting) => mirror.waitingForSpace(waiting),
		keepWaiting: () => !mirror.status().stopRequested,
	});

	let delay = FIRST_BACKOFF_MS;
	let launches = 0;
	/** @type {ReturnType<typeof setTimeout> | undefined} */
	let retry;
	/** @type {import("./driver.mjs").FollowHandle | undefined} */
	let current;
	/** A stop waiting when this link takes over a run that already started: ended there by a one-shot stop first. */
	let stopFirst = started && inbox.stopWaiting();

	/** @param {Record<string, unknown>} final @param {{ seq: number, sessionBytes: number } | undefined} held what the target held */
	async function ended(final, held) {
		finishing = true;
		const notFetched = await gitSync.final();
		mirror.end(final, { held, notFetched });
		done({});
	}

	/**
	 * The run's files at the target are gone (its dir deleted there): nothing there can finish it. What the
	 * workspace still has is fetched, then the run fails with the far side's words.
	 * @param {string} reason
	 */
	async function lost(reason) {
		finishing = true;
		await gitSync.final();
		mirror.fail(reason, "far-run-gone");
		done({ failed: reason });
	}

	/**
	 * A stop while the far run is being launched: the launch gets a moment to finish (then the stop goes
	 * through the far inbox, as always); one that does not is given up, whatever started there is
	 * stopped, and the run recorded stopped.
	 */
	function stopWhileLaunching() {
		// Before the driver: the stop is seen when it is there (or before, while the worktree is made).
		if (!driver || started || finishing || released || stopTimer) return;
		stopTimer = setTimeout(() => {
			if (started || finishing || released) return;
			finishing = true;
			say(`stop: the launch on ${target.name} did not finish in ${STOP_DURING_LAUNCH_MS / 1000} s: given up`);
			current?.close();
			theDriver
				.stop(run)
				.then(
					() => undefined,
					(error) => say(`stop on ${target.name}: ${error instanceof Error ? error.message : String(error)}`),
				)
				.finally(() => {
					mirror.stopped();
					done({});
				});
		}, STOP_DURING_LAUNCH_MS);
	}

	function connect() {
		retry = undefined;
		if (finishing || released) return;
		if (stopFirst) {
			theDriver.stop(run).then(
				() => {
					stopFirst = false;
					connect();
				},
				(error) => unreachable(error instanceof Error ? error.message : String(error)),
			);
			return;
		}
		/** @type {Record<string, unknown> | undefined} */
		let final;
		/** @type {{ seq: number, sessionBytes: number } | undefined} */
		let held;
		let reached = false;
		let lastError = "";
		/** @type {import("./driver.mjs").FollowHandle} */
		let handle;
		/** @type {import("./driver.mjs").FollowHandlers} */
		const on = {
			started() {
				started = true;
				writeJsonAtomic(statePath, { started: true, at: Date.now() });
				onTarget?.({ started: true });
				say(`started on ${target.name}`);
			},
			frame(frame) {
				if (released) return;
				switch (frame.t) {
					case "hello":
						delay = FIRST_BACKOFF_MS;
						mirror.reachable();
						inbox.attach((message) => handle.deliver(message));
						budget.attach((message) => handle.deliver(message));
						return;
					case "status": {
						// This link reached the far run (hello is the channel's): a later death of it starts the count of new links afresh.
						if (started && !reached) resetRelinks(runDir);
						reached = true;
						const error = mirror.setStatus(frame.status);
						if (error) say(error);
						else budget.status(frame.status);
						return;
					}
					case "event": {
						const fresh = frame.seq > mirror.lastSeq;
						const error = mirror.event(frame.seq, frame.line);
						if (error) say(error);
						else if (fresh) supervisor.onLine(frame.line);
						return;
					}
					case "words":
						mirror.words(frame.text, frame.fresh === true);
						return;
					case "receipt": {
						const id = mirror.receipt(frame.receipt);
						if (id) inbox.served(id);
						return;
					}
					case "session":
						// A gap (should not happen): follow again from what the local file has.
						if (!mirror.session(frame.offset, frame.data, frame.reset)) handle.close();
						return;
					case "git":
						gitSync.request();
						return;
					case "end":
						final = frame.status;
						held = frame.held;
						return;
					case "flag":
						mirror.flag(frame);
						say(`${target.name}: ${frame.reason}`);
						return;
					case "error":
						lastError = frame.message;
						say(`${target.name}: ${frame.message}`);
						return;
					default:
						return;
				}
			},
			close(outcome) {
				inbox.detach();
				budget.detach();
				if (released || finishing) return;
				if (final) return void ended(final, held);
				const failure = outcome.failure;
				const reason = failure?.reason ?? (lastError || "the connection closed");
				if (failure?.kind === "gone") return void lost(reason);
				if (!started) return void launchFailed(failure?.kind ?? "protocol", reason, failure?.code);
				unreachable(reason);
			},
		};
		say(`${started ? "following" : "launching"} on ${target.name}`);
		handle = started
			? theDriver.follow(run, { seq: mirror.lastSeq, sessionBytes: mirror.sessionBytes() }, on)
			: theDriver.launch(run, on);
		current = handle;
		if (!started) launches += 1;
	}

	/** @param {string} reason */
	function unreachable(reason) {
		if (released) return;
		mirror.unreachable(reason, Date.now());
		say(`${target.name} unreachable (retry in ${delay} ms): ${reason}`);
		retry = setTimeout(connect, delay);
		delay = Math.min(delay * 2, MAX_BACKOFF_MS);
	}

	/** @param {string} kind @param {string} reason @param {string} [code] the far side's reason code */
	function launchFailed(kind, reason, code) {
		onTarget?.({ failed: reason });
		// A pool's run: another member may take it (nothing started on this one).
		if (config.pool && backToPool(reason)) return;
		// Unreachable before anything started there: a few tries, then the run fails (nothing to clean up).
		if (kind === "unreachable" && launches < LAUNCH_ATTEMPTS) {
			say(`launch on ${target.name} failed (retry in ${delay} ms): ${reason}`);
			retry = setTimeout(connect, delay);
			delay = Math.min(delay * 2, MAX_BACKOFF_MS);
			return;
		}
		finishing = true;
		const failed = `cannot start on ${target.name}: ${reason}`;
		mirror.fail(failed, code && isReasonCode(code) ? code : "start-failed");
		done({ failed });
	}

	/** @param {string} reason @returns {boolean} whether it went back (else it fails here) */
	function backToPool(reason) {
		const pool = String(config.pool);
		let members;
		try {
			members = membersOf(readBoardConfig(config.storeDir).targets[pool] ?? { kind: "", max: 1, env: [] });
		} catch {
			members = undefined;
		}
		if (!members || inbox.stopWaiting()) return false;
		const back = returnToPool({
			storeDir: config.storeDir,
			runDir,
			rowId: config.rowId,
			runId: config.runId,
			createdAt: config.createdAt,
			pool,
			member: target.name,
			members,
			reason,
		});
		if (!back.requeued) {
			reason = back.reason;
			finishing = true;
			mirror.fail(`cannot start on ${pool}: ${back.reason}`);
			done({ failed: back.reason });
			return true;
		}
		say(`back to ${pool}'s queue: ${reason}`);
		finishing = true;
		done({ requeued: true });
		return true;
	}

	if (!started && inbox.stopWaiting()) {
		// Stopped before it started anywhere: nothing to end at the target.
		finishing = true;
		mirror.stopped();
		done({});
	} else {
		mirror.begin();
		connect();
	}

	return {
		/** Lets go of the run without ending it (the link leaves: the next one takes it over). */
		release() {
			if (released) return;
			released = true;
			supervisor.close();
			if (retry) clearTimeout(retry);
			budget.close();
			current?.close();
		},
	};
}
