// The far end of a target: run over ssh as `node <dir>/pkg/<version>/runner/far/host-agent.mjs <verb> ...`
// (or locally against a container's dirs). argv holds only paths and ids; the run config, prompt,
// messages and --env values arrive as frames on stdin (frames.mjs). Answers are frames on stdout: a
// "result" (or "error", exit 1) for one-shot verbs, a stream for follow.
//   check <dir>                              stdin: config { pi?, pkgVersion? }
//   receive-pack <repo.git>                  creates the bare mirror, then is git-receive-pack
//   upload-pack <repo.git>                   git-upload-pack (a remote engine's git over ext:: names both through here)
//   link <dir>                               every run of a target's link on one channel (far-mux.mjs):
//                                            launch, follow, inbox, stop by run id; frames tagged with it
//   follow <runDir> <eventsFromSeq> <sessionFromBytes>   stdin: inbox frames
//   run <dir> <eventsFromSeq> <sessionFromBytes>  a link's launch on one channel: stdin config, then what
//                                            the answer asked for (session chunks; the base comes by git
//                                            push meanwhile), done, then inbox frames; stdout result
//                                            { want, runDir }, result { started }, then follow's stream
// Relative paths are relative to the login's home directory.
//   stop <runDir>                            result { status, left }
//   snapshot <worktree> <rowId>              result { head, wip, tree }
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { checkHost } from "./host-check.mjs";
import { encodeFrame, readFrames } from "./frames.mjs";
import { followRun } from "./far-follow.mjs";
import { stopFarRun } from "./far-end.mjs";
import { checkFarConfig } from "./far-run.mjs";
import { launchNeeds, launchRun, withMirrorLock } from "./far-launch.mjs";
import { serveLink } from "./far-mux.mjs";
import { PACKAGE_ROOT } from "./package-files.mjs";
import { sessionReceiver } from "./session-travel.mjs";
import { snapshotWip } from "./git-workspace.mjs";
import { BoardError } from "../life/reasons.mjs";
import { farRunOf, targetPaths } from "../store/store-layout.mjs";

const AGENT_VERSION = (() => {
	try {
		return String(JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")).version);
	} catch {
		return "unknown";
	}
})();

/** @param {import("./frames.mjs").Frame} frame */
function send(frame) {
	process.stdout.write(encodeFrame(frame));
}

// The link went away: nothing to tell anyone, the run goes on.
process.stdout.on("error", () => process.exit(0));

/** Verbs whose stdout is git's. */
const GIT_SERVICES = new Set(["receive-pack", "upload-pack"]);

let failing = false;
/**
 * Any throw ends host-agent: its words (and its reason code, when it has one) go to the link as an
 * "error" frame, then it exits 1. A verb that kept reading stdin after a throw would hold the link's
 * channel open with nothing behind it, and its row would wait forever.
 * @param {unknown} error
 */
function fail(error) {
	if (failing) return;
	failing = true;
	const code = error instanceof BoardError ? error.code : undefined;
	const message = error instanceof Error ? error.message : String(error);
	process.exitCode = 1;
	// git's services speak git's protocol on stdout: a frame there reads "bad line length character"
	// and hides the cause; the remote's stderr reaches the pusher's.
	if (GIT_SERVICES.has(process.argv[2] ?? "")) {
		process.stderr.write(`host-agent: ${message}\n`, () => process.exit(1));
		return;
	}
	// Exit once the frame is out, or soon if stdout cannot take it (the link stopped reading).
	setTimeout(() => process.exit(1), 2000);
	process.stdout.write(encodeFrame({ t: "error", message, ...(code ? { code } : {}) }), () => process.exit(1));
}
process.on("uncaughtException", fail);
process.on("unhandledRejection", fail);

/**
 * Frames from stdin, one at a time, as a pull: `next()` resolves with the next frame or undefined at EOF.
 */
function stdinFrames() {
	/** @type {import("./frames.mjs").Frame[]} */
	const queue = [];
	/** @type {((frame: import("./frames.mjs").Frame | undefined) => void) | undefined} */
	let waiting;
	/** @type {{ frame: (frame: import("./frames.mjs").Frame) => void, end: () => void } | undefined} */
	let rest;
	let ended = false;
	readFrames(
		process.stdin,
		(frame) => {
			if (rest) rest.frame(frame);
			else if (waiting) {
				const resolve = waiting;
				waiting = undefined;
				resolve(frame);
			} else queue.push(frame);
		},
		{
			onEnd: () => {
				ended = true;
				waiting?.(undefined);
				waiting = undefined;
				rest?.end();
			},
		},
	);
	return {
		/** @returns {Promise<import("./frames.mjs").Frame | undefined>} */
		next() {
			const frame = queue.shift();
			if (frame || ended) return Promise.resolve(frame);
			return new Promise((resolve) => (waiting = resolve));
		},
		/**
		 * Every later frame (and those not pulled yet) goes to `frame`; `end` at EOF.
		 * @param {(frame: import("./frames.mjs").Frame) => void} frame @param {() => void} end
		 */
		handOff(frame, end) {
			rest = { frame, end };
			for (const queued of queue.splice(0)) frame(queued);
			if (ended) end();
		},
	};
}

/** Relative paths and "~/..." (git's ssh URLs) are the login's home's. @param {string} path */
const abs = (path) => resolve(homedir(), path.replace(/^~(\/|$)/, ""));

/** @param {string[]} args @param {number} count @param {string} usage */
function need(args, count, usage) {
	if (args.length < count || args.slice(0, count).some((a) => !a)) throw new Error(`usage: host-agent.mjs ${usage}`);
}

/**
 * @param {string} runDir @param {number} fromSeq @param {number} sessionFrom
 * @param {ReturnType<typeof stdinFrames>} [input] stdin already being read (run)
 */
function follow(runDir, fromSeq, sessionFrom, input) {
	const run = farRunOf(runDir);
	if (!run) throw new Error(`not a run's directory in a target's store: ${runDir}`);
	const paths = targetPaths(run.dir, run.rowId, run.runId);
	send({ t: "hello", agent: AGENT_VERSION, pid: process.pid });
	const follower = followRun({
		runDir,
		fromSeq,
		sessionFrom,
		send,
		sessionFile: paths.session,
		worktree: paths.work,
		rowId: run.rowId,
		cwdOf: paths.work,
		backlog: () => process.stdout.writableLength,
		onDone: () => process.stdout.end(() => process.exit(0)),
	});
	process.stdout.on("drain", follower.poke);
	/** @param {import("./frames.mjs").Frame} frame */
	const onFrame = (frame) => (frame.t === "inbox" ? follower.deliver(frame.message) : undefined);
	// EOF on stdin: the link (or its connection) is gone; the run goes on without us.
	if (input) input.handOff(onFrame, () => process.exit(0));
	else readFrames(process.stdin, onFrame, { onEnd: () => process.exit(0) });
}

/**
 * A link's launch on one channel: what the host lacks is asked for, then the run is prepared,
 * started and followed. A run that already started (a link that lost its channel mid-launch) is
 * only followed.
 * @param {string} dir @param {number} fromSeq @param {number} sessionFrom
 */
async function run(dir, fromSeq, sessionFrom) {
	const input = stdinFrames();
	const first = await input.next();
	if (first?.t !== "config") throw new Error("run: expected a config frame on stdin");
	const config = checkFarConfig(first.config);
	const needs = await launchNeeds(dir, config);
	if (!needs.started) {
		send({ t: "result", value: { want: needs.want, runDir: needs.runDir } });
		await receiveUntilDone(
			input,
			needs.want.includes("session") ? { path: needs.session, digest: config.session } : undefined,
		);
		await launchRun(dir, config);
	}
	send({ t: "result", value: { started: true, runDir: needs.runDir } });
	follow(needs.runDir, fromSeq, sessionFrom, input);
}

/**
 * Reads frames up to "done", writing session chunks when a session was asked for.
 * @param {ReturnType<typeof stdinFrames>} input
 * @param {{ path: string, digest: { size: number, sha256: string } | null } | undefined} session
 */
async function receiveUntilDone(input, session) {
	const receiver = session?.digest ? sessionReceiver(session.path, session.digest) : undefined;
	for (let frame = await input.next(); ; frame = await input.next()) {
		if (!frame) throw new Error("the link went away before it was done sending");
		if (frame.t === "done") break;
		if (frame.t === "session" && receiver) receiver.chunk(frame.offset, frame.data);
	}
	await receiver?.finish();
}

/**
 * git receive-pack into the mirror, holding its lock (a worktree being created there must not be read
 * by the push's connectivity check). @param {string} repo
 */
function receivePack(repo) {
	return withMirrorLock(repo, () => gitService("receive-pack", repo));
}

/** `git <service> <repo>` on this process's stdio; its exit code is ours. @param {string} service @param {string} repo */
function gitService(service, repo) {
	return new Promise((resolvePromise) => {
		const child = spawn("git", [service, repo], { stdio: "inherit" });
		child.on("error", (error) => {
			process.stderr.write(`host-agent: git ${service}: ${error.message}\n`);
			process.exitCode = 1;
			resolvePromise(undefined);
		});
		child.on("exit", (code) => {
			process.exitCode = code ?? 1;
			resolvePromise(undefined);
		});
	});
}

async function main() {
	const [verb = "", ...args] = process.argv.slice(2);
	switch (verb) {
		case "check": {
			need(args, 1, "check <dir>");
			const first = process.stdin.isTTY ? undefined : await stdinFrames().next();
			const config = first?.t === "config" ? first.config : {};
			return send({
				t: "result",
				value: checkHost(abs(String(args[0])), /** @type {{ pi?: string[], pkgVersion?: string }} */ (config)),
			});
		}
		case "receive-pack":
			need(args, 1, "receive-pack <repo.git>");
			return receivePack(abs(String(args[0])));
		case "upload-pack":
			// A remote engine's git (ext::) names both services through host-agent; a fetch needs no lock.
			need(args, 1, "upload-pack <repo.git>");
			return gitService("upload-pack", abs(String(args[0])));
		case "link":
			need(args, 1, "link <dir>");
			return serveLink(abs(String(args[0])), { agent: AGENT_VERSION });
		case "follow":
			need(args, 3, "follow <runDir> <eventsFromSeq> <sessionFromBytes>");
			return follow(abs(String(args[0])), Number(args[1]) || 0, Number(args[2]) || 0);
		case "run":
			need(args, 3, "run <dir> <eventsFromSeq> <sessionFromBytes>");
			return run(abs(String(args[0])), Number(args[1]) || 0, Number(args[2]) || 0);
		case "stop":
			need(args, 1, "stop <runDir>");
			return send({ t: "result", value: await stopFarRun(abs(String(args[0]))) });
		case "snapshot":
			need(args, 2, "snapshot <worktree> <rowId>");
			return send({ t: "result", value: await snapshotWip(abs(String(args[0])), String(args[1])) });
		default:
			throw new Error(
				`unknown verb "${verb}" (check, receive-pack, upload-pack, link, follow, run, stop, snapshot)`,
			);
	}
}

main().catch(fail);
