// The link's side of host-agent.mjs, for any kind that reaches it through a transport (ssh today; a
// local child for tests; `kubectl exec` one day): what a transport is, a verb's failure in words, and a
// session's bytes as frames. The channel itself is mux-channel.mjs; whatever comes back is checked by
// frames.mjs; the transport turns its own failures into a short reason.
import { closeSync, openSync, readSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SESSION_CHUNK_BYTES } from "../far/frames.mjs";

/** host-agent.mjs in this package (a transport that runs it here, or ships it, names this file). */
export const HOST_AGENT = resolve(dirname(fileURLToPath(import.meta.url)), "../far/host-agent.mjs");

/**
 * How host-agent is reached: `spawn` runs one verb there (`link`: its stdin and stdout carry frames);
 * `failure` reads the transport's own failure from its stderr and exit code (undefined: the transport was fine).
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
