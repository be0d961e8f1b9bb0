// The link's side of host-agent.mjs: runs a verb at a target (over ssh, or as a local process for a
// container's dirs and for tests) and speaks its frames. Whatever comes back is checked by frames.mjs;
// ssh's own failures become a short reason (ssh-transport.mjs).
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { encodeFrame, readFrames, SESSION_CHUNK_BYTES } from "../far/frames.mjs";
import { fileDigest } from "../far/far-run.mjs";
import { gitRemote, shellQuote, sshArgv, sshEnv, sshFailure } from "../kinds/ssh/ssh-transport.mjs";

export const HOST_AGENT = resolve(dirname(fileURLToPath(import.meta.url)), "../far/host-agent.mjs");

/**
 * @typedef {object} FarTransport
 * @property {string} name
 * @property {(verb: string, args: string[]) => import("node:child_process").ChildProcessWithoutNullStreams} spawn
 * @property {(stderr: string, code: number | null) => { kind: string, reason: string } | undefined} failure
 */

/** host-agent as a local child (a container's target-side dirs live on this machine). @returns {FarTransport} */
export function localTransport(options = { node: process.execPath, agent: HOST_AGENT }) {
	return {
		name: "local",
		spawn: (verb, args) => spawn(options.node, [options.agent, verb, ...args], { stdio: ["pipe", "pipe", "pipe"], env: sshEnv() }),
		failure: () => undefined,
	};
}

/**
 * host-agent on an ssh host: `node <dir>/pkg/<version>/runner/far/host-agent.mjs <verb> <args>`.
 * @param {import("../kinds/ssh/ssh-transport.mjs").SshTarget & { dir: string, pkgVersion: string }} target
 * @returns {FarTransport}
 */
export function sshTransport(target) {
	const agent = `${target.dir}/pkg/${target.pkgVersion}/runner/far/host-agent.mjs`;
	return {
		name: target.host,
		spawn: (verb, args) => spawn("ssh", sshArgv(target, ["node", agent, verb, ...args]), { stdio: ["pipe", "pipe", "pipe"], env: sshEnv() }),
		failure: sshFailure,
	};
}

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

/**
 * prepare: sends the run config; sends the local session when the target asks for it (its copy
 * differs). The config's session digest is filled from `sessionFile`.
 * @param {FarTransport} transport @param {string} dir
 * @param {Omit<import("../far/far-run.mjs").FarRunConfig, "session">} config @param {string} sessionFile
 */
export async function farPrepare(transport, dir, config, sessionFile) {
	const session = fileDigest(sessionFile);
	/** @type {Record<string, unknown> | undefined} */
	let prepared;
	let answered = false;
	await callVerb(transport, "prepare", [dir], {
		input: [{ t: "config", config: { ...config, session } }],
		onFrame(frame, child) {
			if (frame.t !== "result") return;
			if (answered) {
				prepared = frame.value;
				return;
			}
			answered = true;
			if (frame.value.want === "session" && session) writeSession(child.stdin, sessionFile, session.size);
			child.stdin.end(encodeFrame({ t: "done" }));
		},
	});
	if (!prepared) throw new FarError(`prepare at ${transport.name} ended without an answer`, "protocol");
	return prepared;
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

/**
 * follow: streams the run's frames to `onFrame` until "end", the connection drops or close().
 * `onClose` gets the reason when it was not a clean end.
 * @param {FarTransport} transport @param {string} runDir @param {number} fromSeq @param {number} sessionFrom
 * @param {(frame: import("../far/frames.mjs").Frame) => void} onFrame
 * @param {(outcome: { ended: boolean, failure?: { kind: string, reason: string } }) => void} onClose
 */
export function farFollow(transport, runDir, fromSeq, sessionFrom, onFrame, onClose) {
	return farStream(transport, "follow", [runDir, String(fromSeq), String(sessionFrom)], onFrame, onClose);
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

/** A relative dir is the login's home's: "~/<dir>" in git's ssh URLs. @param {string} dir @param {string} repoKey */
export const farMirror = (dir, repoKey) => join(dir.startsWith("/") ? dir : `~/${dir}`, "repos", `${repoKey}.git`);

/**
 * The row's repository mirror on an ssh host as a git remote, over the target's connection; the push
 * creates the mirror when missing (host-agent receive-pack).
 * @param {import("../kinds/ssh/ssh-transport.mjs").SshTarget & { dir: string, pkgVersion: string }} target @param {string} repoKey
 * @returns {import("./git-travel.mjs").GitRemote}
 */
export function sshMirrorRemote(target, repoKey) {
	const agent = `${target.dir}/pkg/${target.pkgVersion}/runner/far/host-agent.mjs`;
	return { ...gitRemote(target, farMirror(target.dir, repoKey)), receivePack: ["node", agent, "receive-pack"].map(shellQuote).join(" ") };
}

/**
 * `targets check` before our files are on the host: host-check.mjs itself goes over ssh stdin to the
 * host's node, so a missing or too-old node, pi or git is reported, not just "host-agent not found".
 * @param {import("../kinds/ssh/ssh-transport.mjs").SshTarget} target @param {string} dir
 * @param {{ pi?: string[], pkgVersion?: string, env?: Record<string, string> }} config
 * @returns {Promise<ReturnType<typeof import("../far/host-check.mjs").checkHost>>}
 */
export function checkOverSsh(target, dir, config) {
	const source = readFileSync(join(dirname(HOST_AGENT), "host-check.mjs"), "utf8");
	const program = `${source}\nprocess.stdout.write(JSON.stringify(checkHost(${JSON.stringify(dir)}, ${JSON.stringify(config)})));\n`;
	return new Promise((resolvePromise, reject) => {
		const child = spawn("ssh", sshArgv(target, ["node", "--input-type=module", "-"]), { stdio: ["pipe", "pipe", "pipe"], env: sshEnv() });
		let out = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (/** @type {string} */ c) => (out += c));
		child.stderr.setEncoding("utf8").on("data", (/** @type {string} */ c) => (stderr = (stderr + c).slice(-8000)));
		child.stdin.on("error", () => undefined);
		child.stdin.end(program);
		child.on("error", (error) => reject(new FarError(error.message, "unreachable")));
		child.on("close", (code) => {
			const failure = sshFailure(stderr, code);
			if (failure) return reject(new FarError(failure.reason, failure.kind));
			if (code === 127) return reject(new FarError(`node not found on the host's non-interactive PATH (${stderr.trim().split("\n").pop() ?? ""})`, "remote"));
			try {
				resolvePromise(JSON.parse(out));
			} catch {
				reject(new FarError(`check failed (exit ${code}): ${stderr.trim().split("\n").pop() ?? out.slice(0, 200)}`, "remote"));
			}
		});
	});
}
