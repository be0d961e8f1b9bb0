// The link's driver for a container target (driver.mjs): the engine work is container-transport.mjs;
// this composes it with the follow code the ssh host runs (far-follow.mjs), in the link's own process,
// over the target-side dirs on this machine. The runner inside has no liveness we can read here (its
// pid is the container's), so the engine's `wait` says when it is gone. Git: after a turn or a tool,
// the workspace is snapshotted inside a container and fetched with `git fetch` (no porcelain here).
import { endOrphan } from "../../life/run-end.mjs";
import { followRun } from "../../far/far-follow.mjs";
import { BoardError } from "../../life/reasons.mjs";
import { safeStatus } from "../../store/safe-read.mjs";
import { containerDirs } from "./container-run.mjs";
import * as engine from "./container-transport.mjs";
import { fetchWork } from "./container-workspace.mjs";

/** Events after which the workspace may have changed. */
const GIT_EVENTS = /"type":"(tool_execution_end|turn_end|agent_end)"/;

/**
 * A handle whose follow starts later (after the container started); messages wait until then.
 * @param {(attach: (handle: import("../../link/driver.mjs").FollowHandle) => void) => void} start
 * @returns {import("../../link/driver.mjs").FollowHandle}
 */
export function deferred(start) {
	/** @type {import("../../link/driver.mjs").FollowHandle | undefined} */
	let inner;
	/** @type {Record<string, unknown>[]} */
	const waiting = [];
	let closed = false;
	start((handle) => {
		if (closed) return handle.close();
		inner = handle;
		for (const message of waiting.splice(0)) handle.deliver(message);
	});
	return {
		deliver: (message) => (inner ? inner.deliver(message) : waiting.push(message)),
		close() {
			closed = true;
			inner?.close();
		},
	};
}

/** @param {import("./container-argv.mjs").ContainerTarget} target @returns {import("../../link/driver.mjs").TargetDriver} */
export function containerDriver(target) {
	/** @param {import("../../link/driver.mjs").LinkRun} run */
	const asContainer = (run) => /** @type {import("./container-transport.mjs").ContainerRun} */ ({ ...run, target });

	/**
	 * @param {import("../../link/driver.mjs").LinkRun} run @param {{ seq: number, sessionBytes: number }} from
	 * @param {import("../../link/driver.mjs").FollowHandlers} on @returns {import("../../link/driver.mjs").FollowHandle}
	 */
	function followFrom(run, from, on) {
		const dirs = containerDirs(asContainer(run));
		const waiter = engine.wait(asContainer(run));
		let exited = false;
		let ended = false;
		let stopped = false;
		// After the caller holds the handle: hello is where it starts forwarding the inbox.
		setImmediate(() => on.frame({ t: "hello", agent: "container", pid: process.pid }));
		const follower = followRun({
			runDir: dirs.run,
			fromSeq: from.seq,
			sessionFrom: from.sessionBytes,
			sessionFile: dirs.session,
			worktree: null,
			rowId: run.rowId,
			alive: () => !exited,
			send(frame) {
				if (frame.t === "end") ended = true;
				on.frame(frame);
				// The link fetches back (coalesced) on a git frame; the snapshot is taken inside then.
				if (frame.t === "event" && GIT_EVENTS.test(frame.line)) on.frame({ t: "git", head: "", wip: "" });
			},
			onDone(outcome) {
				waiter.cancel();
				if (stopped) return;
				if (ended) return on.close({ ended: true });
				on.close({
					ended: false,
					failure: outcome.gone
						? { kind: "gone", reason: outcome.gone, code: "far-run-gone" }
						: { kind: "protocol", reason: "follow stopped" },
				});
			},
		});
		void waiter.done.then(async (exit) => {
			// Gone without its runner recording an end (killed from outside, out of memory, removed): the
			// container's exit says why, recorded at the target before follow reports the end (wait did,
			// unless the engine could not be asked).
			const status = safeStatus(dirs.run);
			if (status && typeof status.endedAt !== "number")
				await endOrphan(dirs.run, engine.exitEnd(dirs.run, exit, target), { alive: () => false }).catch(
					() => undefined,
				);
			exited = true;
			follower.poke();
		});
		return {
			deliver: follower.deliver,
			close() {
				stopped = true;
				waiter.cancel();
				follower.close();
			},
		};
	}

	return {
		launch(run, on) {
			return deferred((attach) => {
				engine.startRun(asContainer(run)).then(
					() => {
						on.started?.();
						attach(followFrom(run, { seq: 0, sessionBytes: 0 }, on));
					},
					(error) =>
						on.close({
							ended: false,
							failure: {
								kind: "remote",
								reason: error instanceof Error ? error.message : String(error),
								...(error instanceof BoardError ? { code: error.code } : {}),
							},
						}),
				);
			});
		},
		follow: followFrom,
		async fetchBack(run) {
			// The snapshot is taken inside a container; this side only fetches (upload-pack runs nothing the workspace names).
			await fetchWork(asContainer(run));
		},
		stop: (run) => engine.stop(asContainer(run)),
		finish: (run) => engine.cleanup(asContainer(run)),
	};
}
