// The far end of a target: run over ssh as `node <dir>/pkg/<version>/runner/targets/host-agent.mjs <verb> ...`
// (or locally against a container's dirs). argv holds only paths and ids; the run config, prompt,
// messages and --env values arrive as frames on stdin (frames.mjs). Answers are frames on stdout: a
// "result" (or "error", exit 1) for one-shot verbs, a stream for follow.
//   check <dir>                              stdin: config { pi?, pkgVersion? }
//   receive-pack <repo.git>                  creates the bare mirror, then is git-receive-pack
//   prepare <dir>                            stdin: config, then (when asked) session chunks, done
//   start <runDir>                           spawns job-runner.mjs detached; result { pid, start }
//   follow <runDir> <eventsFromSeq> <sessionFromBytes>   stdin: inbox frames
//   stop <runDir>                            result { status, left }
//   snapshot <worktree> <rowId>              result { head, wip, tree }
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { checkHost } from "./host-check.mjs";
import { encodeFrame, readFrames } from "./frames.mjs";
import { followRun } from "./far-follow.mjs";
import { stopFarRun } from "./far-end.mjs";
import { checkFarConfig, fileDigest, farPaths, PACKAGE_ROOT, prepareRun, sameDigest, sessionReceiver, startRun } from "./far-run.mjs";
import { ensureMirror, snapshotWip } from "./git-workspace.mjs";

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

/**
 * Frames from stdin, one at a time, as a pull: `next()` resolves with the next frame or undefined at EOF.
 */
function stdinFrames() {
	/** @type {import("./frames.mjs").Frame[]} */
	const queue = [];
	/** @type {((frame: import("./frames.mjs").Frame | undefined) => void) | undefined} */
	let waiting;
	let ended = false;
	readFrames(
		process.stdin,
		(frame) => {
			if (waiting) {
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
	};
}

/** @param {string[]} args @param {number} count @param {string} usage */
function need(args, count, usage) {
	if (args.length < count || args.slice(0, count).some((a) => !a)) throw new Error(`usage: host-agent.mjs ${usage}`);
}

/** @param {string} dir */
async function prepare(dir) {
	const input = stdinFrames();
	const first = await input.next();
	if (first?.t !== "config") throw new Error("prepare: expected a config frame on stdin");
	const config = checkFarConfig(first.config);
	const sessionPath = farPaths(dir, config.rowId).session;
	const wanted = config.session !== null && !sameDigest(fileDigest(sessionPath), config.session);
	send({ t: "result", value: { want: wanted ? "session" : "nothing" } });
	if (wanted && config.session) {
		const receiver = sessionReceiver(sessionPath, config.session);
		for (let frame = await input.next(); frame && frame.t !== "done"; frame = await input.next()) {
			if (frame.t === "session") receiver.chunk(frame.offset, frame.data);
		}
		await receiver.finish();
	}
	return prepareRun(dir, config);
}

/** @param {string} runDir @param {number} fromSeq @param {number} sessionFrom */
function follow(runDir, fromSeq, sessionFrom) {
	send({ t: "hello", agent: AGENT_VERSION, pid: process.pid });
	const follower = followRun({ runDir, fromSeq, sessionFrom, send, onDone: () => process.stdout.end(() => process.exit(0)) });
	// EOF on stdin: the link (or its connection) is gone; the run goes on without us.
	readFrames(process.stdin, (frame) => (frame.t === "inbox" ? follower.deliver(frame.message) : undefined), { onEnd: () => process.exit(0) });
}

/** @param {string} repo */
function receivePack(repo) {
	ensureMirror(repo);
	const child = spawn("git", ["receive-pack", repo], { stdio: "inherit" });
	child.on("error", (error) => {
		process.stderr.write(`host-agent: git receive-pack: ${error.message}\n`);
		process.exit(1);
	});
	child.on("exit", (code) => process.exit(code ?? 1));
}

async function main() {
	const [verb = "", ...args] = process.argv.slice(2);
	switch (verb) {
		case "check": {
			need(args, 1, "check <dir>");
			const first = process.stdin.isTTY ? undefined : await stdinFrames().next();
			const config = first?.t === "config" ? first.config : {};
			return send({ t: "result", value: checkHost(String(args[0]), /** @type {{ pi?: string[], pkgVersion?: string }} */ (config)) });
		}
		case "receive-pack":
			need(args, 1, "receive-pack <repo.git>");
			return receivePack(String(args[0]));
		case "prepare":
			need(args, 1, "prepare <dir>");
			return send({ t: "result", value: await prepare(String(args[0])) });
		case "start":
			need(args, 1, "start <runDir>");
			return send({ t: "result", value: await startRun(String(args[0])) });
		case "follow":
			need(args, 3, "follow <runDir> <eventsFromSeq> <sessionFromBytes>");
			return follow(String(args[0]), Number(args[1]) || 0, Number(args[2]) || 0);
		case "stop":
			need(args, 1, "stop <runDir>");
			return send({ t: "result", value: await stopFarRun(String(args[0])) });
		case "snapshot":
			need(args, 2, "snapshot <worktree> <rowId>");
			return send({ t: "result", value: snapshotWip(String(args[0]), String(args[1])) });
		default:
			throw new Error(`unknown verb "${verb}" (check, receive-pack, prepare, start, follow, stop, snapshot)`);
	}
}

main().catch((error) => {
	send({ t: "error", message: error instanceof Error ? error.message : String(error) });
	process.exitCode = 1;
});
