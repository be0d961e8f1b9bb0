// The far end of a target: run over ssh as `node <dir>/pkg/<version>/runner/far/host-agent.mjs <verb> ...`
// (or in a remote engine's station). argv holds only paths; runs, messages and --env values arrive as
// frames on the link's channel (frames.mjs).
//   link <dir>                               every run of a target's link on one channel (far-mux.mjs):
//                                            launch, follow, inbox, stop by run id; frames tagged with it
//   receive-pack <repo.git>                  creates the bare mirror, then is git-receive-pack
//   upload-pack <repo.git>                   git-upload-pack (a remote engine's git over ext:: names both through here)
// Relative paths are relative to the login's home directory. `targets check` runs host-check.mjs over
// stdin instead (ssh-far.mjs): it must answer before our files are there.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { encodeFrame } from "./frames.mjs";
import { withMirrorLock } from "./far-launch.mjs";
import { serveLink } from "./far-mux.mjs";
import { PACKAGE_ROOT } from "./package-files.mjs";
import { BoardError } from "../life/reasons.mjs";

const AGENT_VERSION = (() => {
	try {
		return String(JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")).version);
	} catch {
		return "unknown";
	}
})();

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

/** Relative paths and "~/..." (git's ssh URLs) are the login's home's. @param {string} path */
const abs = (path) => resolve(homedir(), path.replace(/^~(\/|$)/, ""));

/** @param {string[]} args @param {number} count @param {string} usage */
function need(args, count, usage) {
	if (args.length < count || args.slice(0, count).some((a) => !a)) throw new Error(`usage: host-agent.mjs ${usage}`);
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
		default:
			throw new Error(`unknown verb "${verb}" (link, receive-pack, upload-pack)`);
	}
}

main().catch(fail);
