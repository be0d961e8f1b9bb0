// A driver (driver.mjs) for any kind whose far side is host-agent.mjs reached through a transport
// (far-client.mjs): ssh today, a local child in tests, `kubectl exec` one day. Launch is one stream:
// `run` takes the config, asks for what the target lacks (the session as frames; the base commit, which
// goes by git push meanwhile), prepares and starts the far runner and goes straight on following it.
// A target without host-agent at this version (missing-agent) gets it installed once, then launch again.
import { fileDigest } from "../far/session-travel.mjs";
import { BoardError } from "../life/reasons.mjs";
import { targetPaths } from "../store/store-layout.mjs";
import { encodeFrame } from "../far/frames.mjs";
import { callVerb, farStream, writeSession } from "./far-client.mjs";
import { fetchBack, pushBase, repoKey } from "./git-travel.mjs";

/**
 * @typedef {object} AgentTarget
 * @property {string} name
 * @property {string} dir        the target's dir there (its store, mirrors and workspaces)
 * @property {string[]} [pi]     the pi command there
 * @property {import("./far-client.mjs").FarTransport} transport
 * @property {(repoKey: string) => import("./git-travel.mjs").GitRemote} remote  the target's mirror of a repository
 * @property {() => Promise<unknown>} [install]  puts host-agent there at this version
 */

/** @param {AgentTarget} target @returns {import("./driver.mjs").TargetDriver} */
export function agentDriver(target) {
	const { transport } = target;
	/** @param {import("./driver.mjs").LinkRun} run */
	const farRunDir = (run) => targetPaths(target.dir, run.rowId, run.runId).run;
	let installed = false;

	/**
	 * One launch attempt over one stream; it closes with "missing-agent" when host-agent is not there at
	 * this version. Before the far runner started, an error from the far side is the launch's failure (in
	 * its words and code): host-agent exits on it, and nothing waits for the channel to close.
	 * @param {import("./driver.mjs").LinkRun} run @param {import("./driver.mjs").FollowHandlers} on
	 * @returns {import("./driver.mjs").FollowHandle}
	 */
	function launchOnce(run, on) {
		const key = repoKey(run.repo);
		let closed = false;
		/** @param {import("./far-client.mjs").FarOutcome} outcome */
		const close = (outcome) => {
			if (closed) return;
			closed = true;
			on.close(outcome);
		};
		/** @type {{ size: number, sha256: string } | null} */
		let session;
		try {
			session = fileDigest(run.sessionFile);
		} catch (error) {
			// The local session cannot travel (over its limit): nothing is started there.
			setImmediate(() => close({ ended: false, failure: { kind: "remote", reason: error instanceof Error ? error.message : String(error), ...(error instanceof BoardError ? { code: error.code } : {}) } }));
			return { deliver: () => undefined, close: () => undefined };
		}
		const config = { ...run.config, repoKey: key, base: run.base, subdir: run.subdir, env: { ...run.config.env, ...run.forwarded }, piCommand: target.pi, session };
		let phase = "asking";
		const handle = farStream(
			transport,
			"run",
			[target.dir, "0", "0"],
			(frame) => {
				if (phase !== "following" && frame.t === "error") {
					close({ ended: false, failure: { kind: "remote", reason: frame.message, ...(frame.code ? { code: frame.code } : {}) } });
					handle.close();
					return;
				}
				if (phase === "asking" && frame.t === "result") {
					phase = "preparing";
					const want = Array.isArray(frame.value.want) ? frame.value.want : [];
					try {
						// What the target asked for: the base commit (git push) and the session (frames), then done.
						if (want.includes("base")) pushBase({ repo: run.repo, remote: target.remote(key), rowId: run.rowId, commit: run.base });
						if (want.includes("session") && session) writeSession(handle.child.stdin, run.sessionFile, session.size);
						handle.child.stdin.write(encodeFrame({ t: "done" }));
					} catch (error) {
						close({ ended: false, failure: { kind: "remote", reason: error instanceof Error ? error.message : String(error) } });
						handle.close();
					}
					return;
				}
				if (phase === "preparing" && frame.t === "result" && frame.value.started === true) {
					phase = "following";
					on.started?.();
					return;
				}
				on.frame(frame);
			},
			close,
			{ input: [{ t: "config", config }] },
		);
		return handle;
	}

	/**
	 * A stream tried once more after host-agent is installed there, when it was missing at this version
	 * (a first launch; a follow after our files were removed there, or by a link of a newer version).
	 * @param {(on: import("./driver.mjs").FollowHandlers) => import("./driver.mjs").FollowHandle} open
	 * @param {import("./driver.mjs").FollowHandlers} on
	 * @returns {import("./driver.mjs").FollowHandle}
	 */
	function withInstall(open, on) {
		/** @type {import("./driver.mjs").FollowHandle | undefined} */
		let current;
		let closed = false;
		const install = target.install;
		current = open({
			...on,
			close: (outcome) => {
				if (closed || outcome.ended || outcome.failure?.kind !== "missing-agent" || installed || !install) return on.close(outcome);
				installed = true;
				install().then(
					() => {
						if (!closed) current = open(on);
					},
					(error) => on.close({ ended: false, failure: { kind: error.kind ?? "remote", reason: `cannot install the board's worker files on ${target.name}: ${error.message}` } }),
				);
			},
		});
		return {
			deliver: (message) => current?.deliver(message),
			close() {
				closed = true;
				current?.close();
			},
		};
	}

	return {
		launch(run, on) {
			return withInstall((handlers) => launchOnce(run, handlers), on);
		},
		follow(run, from, on) {
			return withInstall((handlers) => farStream(transport, "follow", [farRunDir(run), String(from.seq), String(from.sessionBytes)], handlers.frame, handlers.close), on);
		},
		async fetchBack(run) {
			fetchBack({ repo: run.repo, remote: target.remote(repoKey(run.repo)), rowId: run.rowId });
		},
		async stop(run) {
			const result = await callVerb(transport, "stop", [farRunDir(run)]);
			return { status: /** @type {Record<string, unknown> | undefined} */ (result.status) };
		},
	};
}

