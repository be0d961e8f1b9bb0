// The link's side of host-agent `link` (far-mux.mjs): one long-lived channel to the host for every run
// the target's link owns there, opened on first use and again after it dropped. Frames about a run
// carry its id; each run listens for its own, and when the channel goes every run listening hears
// how (the transport's failure, host-agent missing at this version, a protocol error) and follows
// again on its own backoff. The channel's own frames (hello, stat: the host's load) go to `hooks`.
import { encodeFrame, readFrames } from "../far/frames.mjs";
import { streamFailure } from "./far-client.mjs";

/**
 * @typedef {object} RunListener
 * @property {(frame: import("../far/frames.mjs").Frame) => void} frame
 * @property {(outcome: import("./far-client.mjs").FarOutcome) => void} close
 */

/**
 * @typedef {object} ChannelHooks
 * @property {(stat: { load: number, cpus: number }) => void} [onLoad]   hello and stat frames
 * @property {() => void} [onOpen]                  the host answered (hello)
 * @property {(failure: { kind: string, reason: string }) => void} [onDrop]   the channel went
 */

/**
 * @param {import("./far-client.mjs").FarTransport} transport @param {string} dir the target's dir there
 * @param {ChannelHooks} [hooks]
 */
export function muxChannel(transport, dir, hooks = {}) {
	/** @type {Map<string, Set<RunListener>>} */
	const listeners = new Map();
	/** @type {import("node:child_process").ChildProcessWithoutNullStreams | undefined} */
	let child;
	/** @type {import("../far/frames.mjs").Frame | undefined} */
	let hello;

	/** @param {string} run @param {import("../far/frames.mjs").Frame} frame */
	const toRun = (run, frame) => {
		for (const listener of [...(listeners.get(run) ?? [])]) listener.frame(frame);
	};

	function open() {
		const spawned = transport.spawn("link", [dir]);
		child = spawned;
		hello = undefined;
		let stderr = "";
		/** @type {{ message: string, code?: string } | undefined} */
		let channelError;
		spawned.stderr
			.setEncoding("utf8")
			.on("data", (/** @type {string} */ chunk) => (stderr = (stderr + chunk).slice(-8000)));
		spawned.stdin.on("error", () => undefined);
		readFrames(spawned.stdout, (frame) => {
			if (child !== spawned) return;
			const { run, ...body } = frame;
			if (!run) {
				if (frame.t === "hello") {
					hello = frame;
					hooks.onOpen?.();
					if (frame.load !== undefined && frame.cpus !== undefined)
						hooks.onLoad?.({ load: frame.load, cpus: frame.cpus });
					for (const id of listeners.keys()) toRun(id, frame);
				} else if (frame.t === "stat") hooks.onLoad?.({ load: frame.load, cpus: frame.cpus });
				else if (frame.t === "error") channelError = frame;
				return;
			}
			const plain = /** @type {import("../far/frames.mjs").Frame} */ (body);
			if (plain.t === "close")
				return closeRun(run, {
					ended: false,
					failure: { kind: plain.kind, reason: plain.message, ...(plain.code ? { code: plain.code } : {}) },
				});
			toRun(run, plain);
			if (plain.t === "end") closeRun(run, { ended: true });
		});
		/** @param {{ kind: string, reason: string }} failure */
		const drop = (failure) => {
			if (child !== spawned) return;
			child = undefined;
			hello = undefined;
			hooks.onDrop?.(failure);
			for (const id of [...listeners.keys()]) closeRun(id, { ended: false, failure });
		};
		spawned.on("error", (error) => drop({ kind: "unreachable", reason: error.message }));
		// The channel's end is every run's lost connection (never "gone": that is one run's, in its close frame).
		spawned.on("close", (code, signal) => {
			const failure = streamFailure(transport, "link", { code, signal, stderr, remoteError: channelError });
			drop(failure.kind === "gone" ? { kind: "remote", reason: failure.reason } : failure);
		});
	}

	/** @param {string} run @param {import("./far-client.mjs").FarOutcome} outcome */
	function closeRun(run, outcome) {
		const set = listeners.get(run);
		listeners.delete(run);
		for (const listener of set ?? []) listener.close(outcome);
	}

	/** @param {import("../far/frames.mjs").Frame} frame */
	function send(frame) {
		if (!child) open();
		if (child && !child.stdin.destroyed) child.stdin.write(encodeFrame(frame));
	}

	return {
		/**
		 * Listens for a run's frames (a listener that joins an open channel hears its hello at once, so
		 * it forwards its inbox) until its end, its close, or `detach`. Opens the channel if needed.
		 * @param {string} run @param {RunListener} listener
		 */
		attach(run, listener) {
			const set = listeners.get(run) ?? new Set();
			listeners.set(run, set.add(listener));
			if (!child) open();
			const greeting = hello;
			if (greeting) setImmediate(() => listeners.get(run)?.has(listener) && listener.frame(greeting));
			return {
				/** @param {import("../far/frames.mjs").Frame} frame */
				send: (frame) => send({ ...frame, run }),
				detach() {
					const current = listeners.get(run);
					current?.delete(listener);
					if (current?.size === 0) listeners.delete(run);
				},
			};
		},
		/** Runs someone still listens for. */
		runs: () => listeners.size,
		/** Whether the host has answered on the current channel. */
		open: () => hello !== undefined,
		/** Ends the channel (the link is done with the host). */
		close() {
			const current = child;
			child = undefined;
			current?.stdin.end();
			current?.kill("SIGTERM");
		},
	};
}
