// The link's side of host-agent.mjs, for any kind that reaches it through a transport (ssh today; a
// local child for tests; `kubectl exec` one day): runs a verb at the target and speaks its frames.
// Whatever comes back is checked by frames.mjs; the transport turns its own failures into a short reason.
import { closeSync, openSync, readSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { encodeFrame, readFrames, SESSION_CHUNK_BYTES } from "../far/frames.mjs";

/** host-agent.mjs in this package (a transport that runs it here, or ships it, names this file). */
export const HOST_AGENT = resolve(dirname(fileURLToPath(import.meta.url)), "../far/host-agent.mjs");

/**
 * How host-agent is reached: `spawn` runs one verb there (its stdin and stdout carry frames); `failure`
 * reads the transport's own failure from its stderr and exit code (undefined: the transport was fine).
 * @typedef {object} FarTransport
 * @property {string} name
 * @property {(verb: string, args: string[]) => import("node:child_process").ChildProcessWithoutNullStreams} spawn
 * @property {(stderr: string, code: number | null) => { kind: string, reason: string } | undefined} failure
 */

/** A verb that failed at the target or on the way there. */
export class FarError extends Error {
	/** @param {string} message @param {string} kind */
	constructor(message, kind) {
		super(message);
		this.kind = kind;
	}
}

/**
 * Runs a one-shot verb: sends `input` frames, resolves with the result, or rejects with a FarError
 * whose kind is ssh's failure kind, "remote" (host-agent said why) or "protocol".
 * @param {FarTransport} transport @param {string} verb @param {string[]} args
 * @param {{ input?: import("../far/frames.mjs").Frame[], onFrame?: (frame: import("../far/frames.mjs").Frame, child: import("node:child_process").ChildProcessWithoutNullStreams) => void }} [options]
 * @returns {Promise<Record<string, unknown>>}
 */
export function callVerb(transport, verb, args, options = {}) {
	return new Promise((resolvePromise, reject) => {
		const child = transport.spawn(verb, args);
		/** @type {Record<string, unknown> | undefined} */
		let result;
		let remoteError = "";
		let stderr = "";
		child.stderr
			.setEncoding("utf8")
			.on("data", (/** @type {string} */ chunk) => (stderr = (stderr + chunk).slice(-8000)));
		child.stdin.on("error", () => undefined);
		readFrames(child.stdout, (frame) => {
			if (frame.t === "error") remoteError = frame.message;
			else if (options.onFrame) options.onFrame(frame, child);
			else if (frame.t === "result") result = frame.value;
		});
		if (options.input) for (const frame of options.input) child.stdin.write(encodeFrame(frame));
		if (!options.onFrame) child.stdin.end();
		child.on("error", (error) => reject(new FarError(`${transport.name}: ${error.message}`, "unreachable")));
		child.on("close", (code, signal) => {
			if (code === 0 && !remoteError && (result || options.onFrame)) return resolvePromise(result ?? {});
			const failure = streamFailure(transport, verb, {
				code,
				signal,
				stderr,
				remoteError: remoteError ? { message: remoteError } : undefined,
			});
			reject(new FarError(failure.reason, failure.kind));
		});
	});
}

/** Session bytes as frames, from the start. @param {NodeJS.WritableStream} stdin @param {string} path @param {number} size */
export function writeSession(stdin, path, size) {
	sendSession((frame) => stdin.write(encodeFrame(frame)), path, size);
}

/**
 * Session bytes as frames, from the start, each to `send`.
 * @param {(frame: import("../far/frames.mjs").Frame) => void} send @param {string} path @param {number} size
 */
export function sendSession(send, path, size) {
	const fd = openSync(path, "r");
	try {
		for (let offset = 0; offset < size; ) {
			const buffer = Buffer.alloc(Math.min(SESSION_CHUNK_BYTES, size - offset));
			const read = readSync(fd, buffer, 0, buffer.length, offset);
			if (read <= 0) break;
			send({ t: "session", offset, data: buffer.subarray(0, read).toString("base64") });
			offset += read;
		}
	} finally {
		closeSync(fd);
	}
}

/** host-agent could not be loaded at this version (not installed yet, or an old install). @param {string} stderr */
export function missingAgent(stderr) {
	return /Cannot find module '[^']*host-agent\.mjs'|ERR_MODULE_NOT_FOUND[^\n]*host-agent/.test(stderr);
}

/**
 * How a stream ended: `ended` after an "end" frame, else why (driver.mjs FollowHandlers.close).
 * @typedef {{ ended: boolean, failure?: { kind: string, reason: string, code?: string } }} FarOutcome
 */

/** A far error's code that ends the run, not the connection: its files there are gone. */
const TERMINAL_CODES = new Set(["far-run-gone"]);

/**
 * Why a stream that sent no "end" is over, in a few words: the transport's own failure (ssh's words), our
 * files missing there, no node, the far side's error (its code kept: a far run that is gone is "gone",
 * for good), or a client that died (killed: a connection lost, never "exit null").
 * @param {FarTransport} transport @param {string} verb
 * @param {{ code: number | null, signal: NodeJS.Signals | null, stderr: string, remoteError?: { message: string, code?: string } }} how
 * @returns {{ kind: string, reason: string, code?: string }}
 */
export function streamFailure(transport, verb, { code, signal, stderr, remoteError }) {
	const failure = transport.failure(stderr, code);
	if (failure) return failure;
	if (missingAgent(stderr))
		return { kind: "missing-agent", reason: `the board's worker files are not on ${transport.name} at this version` };
	if (code === 127)
		return {
			kind: "remote",
			reason: `node not found on ${transport.name}'s non-interactive PATH (${stderr.trim().split("\n").pop() ?? ""})`,
		};
	if (remoteError)
		return {
			kind: remoteError.code && TERMINAL_CODES.has(remoteError.code) ? "gone" : "remote",
			reason: remoteError.message,
			...(remoteError.code ? { code: remoteError.code } : {}),
		};
	if (code === null)
		return {
			kind: "unreachable",
			reason: `the connection to ${transport.name} was cut (its ${verb} channel ended by ${signal ?? "a signal"})`,
		};
	const tail = stderr.trim().split("\n").pop();
	return { kind: "protocol", reason: `${verb} on ${transport.name} ended (exit ${code})${tail ? `: ${tail}` : ""}` };
}

/**
 * A streaming verb (follow, run): frames to `onFrame` until "end", the connection drops or close();
 * `input` frames go first, and the stdin stays open for inbox frames.
 * @param {FarTransport} transport @param {string} verb @param {string[]} args
 * @param {(frame: import("../far/frames.mjs").Frame) => void} onFrame
 * @param {(outcome: FarOutcome) => void} onClose
 * @param {{ input?: import("../far/frames.mjs").Frame[] }} [options]
 */
export function farStream(transport, verb, args, onFrame, onClose, options = {}) {
	const child = transport.spawn(verb, args);
	let ended = false;
	let stderr = "";
	/** @type {{ message: string, code?: string } | undefined} */
	let remoteError;
	child.stderr
		.setEncoding("utf8")
		.on("data", (/** @type {string} */ chunk) => (stderr = (stderr + chunk).slice(-8000)));
	child.stdin.on("error", () => undefined);
	readFrames(child.stdout, (frame) => {
		if (frame.t === "end") ended = true;
		if (frame.t === "error") remoteError = frame;
		onFrame(frame);
	});
	for (const frame of options.input ?? []) child.stdin.write(encodeFrame(frame));
	let closed = false;
	/** @param {FarOutcome} outcome */
	const close = (outcome) => {
		if (closed) return;
		closed = true;
		onClose(outcome);
	};
	child.on("error", (error) => close({ ended: false, failure: { kind: "unreachable", reason: error.message } }));
	child.on("close", (code, signal) => {
		if (ended) return close({ ended: true });
		close({ ended: false, failure: streamFailure(transport, verb, { code, signal, stderr, remoteError }) });
	});
	return {
		/** @param {Record<string, unknown>} message an inbox message ({ id, kind, text?, deliverAs?, at }) */
		deliver(message) {
			if (!child.stdin.destroyed) child.stdin.write(encodeFrame({ t: "inbox", message }));
		},
		close() {
			child.stdin.end();
			child.kill("SIGTERM");
		},
		child,
	};
}
