// A driver (driver.mjs) for any kind whose far side is host-agent.mjs reached through a transport
// (far-client.mjs): ssh today, a local child in tests, `kubectl exec` one day. Every run of the target
// goes over one channel (host-agent `link`, mux-channel.mjs), its frames tagged by run id; code goes
// by git in a bounded number of transfers at a time (git-lane.mjs), so a host with forty rows holds
// three ssh sessions. Launch: the config, then what the host asked for (the session as frames; the
// base commit, which goes by git push meanwhile), then done; the host prepares, starts and follows.
// A target without host-agent at this version (missing-agent) gets it installed once, then every run
// that was waiting asks again.
import { fileDigest } from "../far/session-travel.mjs";
import { BoardError } from "../life/reasons.mjs";
import { FarError, sendSession } from "./far-client.mjs";
import { gitLane } from "./git-lane.mjs";
import { repoKey } from "./git-travel.mjs";
import { landingPath } from "./landing.mjs";
import { muxChannel } from "./mux-channel.mjs";

/**
 * @typedef {object} AgentTarget
 * @property {string} name
 * @property {string} dir        the target's dir there (its store, mirrors and workspaces)
 * @property {string[]} [pi]     the pi command there
 * @property {import("./far-client.mjs").FarTransport} transport
 * @property {(repoKey: string) => import("./git-travel.mjs").GitRemote} remote  the target's mirror of a repository
 * @property {() => Promise<unknown>} [install]  puts host-agent there at this version
 */

/** @typedef {import("./far-client.mjs").FarOutcome} Outcome */

/** @param {unknown} error */
const message = (error) => (error instanceof Error ? error.message : String(error));

/**
 * @param {AgentTarget} target @param {import("./mux-channel.mjs").ChannelHooks} [hooks]
 * @returns {import("./driver.mjs").TargetDriver}
 */
export function agentDriver(target, hooks = {}) {
	const channel = muxChannel(target.transport, target.dir, hooks);
	const lane = gitLane();
	/** @type {Promise<void> | undefined} */
	let installing;
	let installed = false;

	/**
	 * host-agent is not there at this version: install it once (every run that was waiting shares it),
	 * then `again`. False when there is nothing to try (no installer, or it was installed already).
	 * @param {Outcome} outcome @param {() => void} again @param {(outcome: Outcome) => void} close
	 */
	function retryAfterInstall(outcome, again, close) {
		const install = target.install;
		if (outcome.failure?.kind !== "missing-agent" || !install || installed) return false;
		installing ??= install().then(() => {
			installed = true;
		});
		installing.then(
			() => again(),
			(/** @type {Error & { kind?: string }} */ error) =>
				close({
					ended: false,
					failure: {
						kind: error.kind ?? "remote",
						reason: `cannot install the board's worker files on ${target.name}: ${error.message}`,
					},
				}),
		);
		return true;
	}

	/**
	 * One run's request on the channel, asked again after an install; `listen` gets the run's frames.
	 * @param {import("./driver.mjs").LinkRun} run @param {import("./driver.mjs").FollowHandlers} on
	 * @param {(att: ReturnType<typeof channel.attach>) => void} ask
	 * @param {(frame: import("../far/frames.mjs").Frame, att: ReturnType<typeof channel.attach>, fail: (reason: string, code?: string) => void) => boolean} [intercept] true: handled
	 * @returns {import("./driver.mjs").FollowHandle}
	 */
	function request(run, on, ask, intercept) {
		let closed = false;
		/** @type {ReturnType<typeof channel.attach> | undefined} */
		let att;
		/** @param {Outcome} outcome */
		const close = (outcome) => {
			if (closed) return;
			closed = true;
			on.close(outcome);
		};
		/** @param {string} reason @param {string} [code] the far side's reason code */
		const fail = (reason, code) => {
			att?.send({ t: "unfollow" });
			att?.detach();
			on.frame({ t: "error", message: reason });
			close({ ended: false, failure: { kind: "remote", reason, ...(code ? { code } : {}) } });
		};
		const start = () => {
			if (closed) return;
			const current = channel.attach(run.runId, {
				frame(frame) {
					if (!intercept?.(frame, current, fail)) on.frame(frame);
				},
				close(outcome) {
					if (!closed && !retryAfterInstall(outcome, start, close)) close(outcome);
				},
			});
			att = current;
			ask(current);
		};
		start();
		return {
			deliver: (inbox) => att?.send({ t: "inbox", message: inbox }),
			close() {
				closed = true;
				att?.send({ t: "unfollow" });
				att?.detach();
			},
		};
	}

	return {
		launch(run, on) {
			const key = repoKey(run.repo);
			/** @type {{ size: number, sha256: string } | null} */
			let session;
			try {
				session = fileDigest(run.sessionFile);
			} catch (error) {
				// The local session cannot travel (over its limit): nothing is started there.
				setImmediate(() =>
					on.close({
						ended: false,
						failure: {
							kind: "remote",
							reason: message(error),
							...(error instanceof BoardError ? { code: error.code } : {}),
						},
					}),
				);
				return { deliver: () => undefined, close: () => undefined };
			}
			const config = {
				...run.config,
				repoKey: key,
				base: run.base,
				subdir: run.subdir,
				env: { ...run.config.env, ...run.forwarded },
				piCommand: target.pi,
				session,
			};
			let phase = "asking";
			return request(
				run,
				on,
				(att) => {
					phase = "asking";
					att.send({ t: "launch", config });
				},
				(frame, att, fail) => {
					// Before the far runner started, an error from the host is the launch's failure, in its words and code.
					if (phase !== "following" && frame.t === "error") {
						fail(frame.message, frame.code);
						return true;
					}
					if (frame.t !== "result") return false;
					if (phase === "asking" && Array.isArray(frame.value.want)) {
						phase = "preparing";
						const want = frame.value.want;
						// What the host asked for: the base commit (git push, joined with the burst's), the session (frames), then done.
						const base = want.includes("base")
							? lane.push({ repo: run.repo, remote: target.remote(key), rowId: run.rowId, commit: run.base })
							: Promise.resolve();
						base.then(
							() => {
								if (want.includes("session") && session) sendSession(att.send, run.sessionFile, session.size);
								att.send({ t: "done" });
							},
							(error) => fail(message(error)),
						);
					} else if (phase === "preparing" && frame.value.started === true) {
						phase = "following";
						on.started?.();
					}
					return true;
				},
			);
		},
		follow(run, from, on) {
			return request(
				run,
				on,
				(att) => att.send({ t: "follow", row: run.rowId, seq: from.seq, bytes: from.sessionBytes }),
				(frame) => frame.t === "result",
			);
		},
		async fetchBack(run) {
			const key = repoKey(run.repo);
			await lane.fetch({
				repo: run.repo,
				remote: target.remote(key),
				rowId: run.rowId,
				landing: landingPath(run.storeDir, key),
				base: run.base,
			});
		},
		stop(run) {
			return new Promise((resolvePromise, reject) => {
				let done = false;
				const handle = request(
					run,
					{
						frame: () => undefined,
						close: (outcome) => {
							if (done) return;
							done = true;
							reject(
								new FarError(
									outcome.failure?.reason ?? "the run's stream ended before its stop was answered",
									outcome.failure?.kind ?? "protocol",
								),
							);
						},
					},
					(att) => att.send({ t: "stop", row: run.rowId }),
					(frame) => {
						if (frame.t !== "result" || typeof frame.value.stopped !== "boolean" || done) return true;
						done = true;
						handle.close();
						if (frame.value.stopped)
							resolvePromise({
								status: /** @type {Record<string, unknown> | undefined} */ (frame.value.status),
							});
						else reject(new FarError(String(frame.value.error ?? "stop failed"), "remote"));
						return true;
					},
				);
			});
		},
		close: () => channel.close(),
	};
}
