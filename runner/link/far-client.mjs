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
		child.stderr.setEncoding("utf8").on("data", (/** @type {string} */ chunk) => (stderr = (stderr + chunk).slice(-8000)));
		child.stdin.on("error", () => undefined);
		readFrames(child.stdout, (frame) => {
			if (frame.t === "error") remoteError = frame.message;
			else if (options.onFrame) options.onFrame(frame, child);
			else if (frame.t === "result") result = frame.value;
		});
		if (options.input) for (const frame of options.input) child.stdin.write(encodeFrame(frame));
		if (!options.onFrame) child.stdin.end();
		child.on("error", (error) => reject(new FarError(`${transport.name}: ${error.message}`, "unreachable")));
		child.on("close", (code) => {
			const failure = transport.failure(stderr, code);
			if (failure) return reject(new FarError(failure.reason, failure.kind));
			if (remoteError) return reject(new FarError(remoteError, "remote"));
			if (code === 0 && (result || options.onFrame)) return resolvePromise(result ?? {});
			const tail = stderr.trim().split("\n").pop() ?? "";
			reject(new FarError(`${verb} at ${transport.name} failed (exit ${code})${tail ? `: ${tail}` : ""}`, code === 127 ? "remote" : "protocol"));
		});
	});
}

/** Session bytes as frames, from the start. @param {NodeJS.WritableStream} stdin @param {string} path @param {number} size */
export function writeSession(stdin, path, size) {
	const fd = openSync(path, "r");
	try {
		for (let offset = 0; offset < size; ) {
			const buffer = Buffer.alloc(Math.min(SESSION_CHUNK_BYTES, size - offset));
			const read = readSync(fd, buffer, 0, buffer.length, offset);
			if (read <= 0) break;
			stdin.write(encodeFrame({ t: "session", offset, data: buffer.subarray(0, read).toString("base64") }));
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
 * A streaming verb (follow, run): frames to `onFrame` until "end", the connection drops or close();
 * `input` frames go first, and the stdin stays open for inbox frames.
 * @param {FarTransport} transport @param {string} verb @param {string[]} args
 * @param {(frame: import("../far/frames.mjs").Frame) => void} onFrame
 * @param {(outcome: { ended: boolean, failure?: { kind: string, reason: string } }) => void} onClose
 * @param {{ input?: import("../far/frames.mjs").Frame[] }} [options]
 */
export function farStream(transport, verb, args, onFrame, onClose, options = {}) {
	const child = transport.spawn(verb, args);
	let ended = false;
	let stderr = "";
	let remoteError = "";
	child.stderr.setEncoding("utf8").on("data", (/** @type {string} */ chunk) => (stderr = (stderr + chunk).slice(-8000)));
	child.stdin.on("error", () => undefined);
	readFrames(child.stdout, (frame) => {
		if (frame.t === "end") ended = true;
		if (frame.t === "error") remoteError = frame.message;
		onFrame(frame);
	});
	for (const frame of options.input ?? []) child.stdin.write(encodeFrame(frame));
	child.on("error", (error) => onClose({ ended: false, failure: { kind: "unreachable", reason: error.message } }));
	child.on("close", (code) => {
		if (ended) return onClose({ ended: true });
		const failure = transport.failure(stderr, code);
		if (failure) return onClose({ ended: false, failure });
		if (missingAgent(stderr)) return onClose({ ended: false, failure: { kind: "missing-agent", reason: `the board's worker files are not on ${transport.name} at this version` } });
		if (code === 127) return onClose({ ended: false, failure: { kind: "remote", reason: `node not found on ${transport.name}'s non-interactive PATH (${stderr.trim().split("\n").pop() ?? ""})` } });
		if (remoteError) return onClose({ ended: false, failure: { kind: "remote", reason: remoteError } });
		const tail = stderr.trim().split("\n").pop();
		onClose({ ended: false, failure: { kind: "protocol", reason: `${verb} ended (exit ${code})${tail ? `: ${tail}` : ""}` } });
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

