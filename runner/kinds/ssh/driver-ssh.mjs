// The link's driver for an ssh target (driver.mjs): host-agent.mjs on the host, over the target's one
// multiplexed connection (ssh-transport.mjs). Launch is one ssh channel: `run` takes the config, asks
// for what the host lacks (the session, the base commit, which goes by git push over the same
// master meanwhile), prepares and starts the far runner and goes straight on following it. The
// board's worker-side files are copied over when the host does not have this version yet.
import { join } from "node:path";
import { encodeFrame } from "../../far/frames.mjs";
import { callVerb, farStream, sshMirrorRemote, sshTransport, writeSession } from "../../link/far-client.mjs";
import { farPaths, fileDigest } from "../../far/far-run.mjs";
import { fetchBack as fetchRefs, pushBase, repoKey } from "../../link/git-travel.mjs";
import { cachedPackageVersion, installOverSsh } from "./pkg-install.mjs";
import { controlPathFor } from "./ssh-transport.mjs";

/**
 * @param {import("../driver.mjs").SshTargetConfig & { name: string }} target
 * @param {{ storeDir: string }} context
 * @returns {import("../driver.mjs").TargetDriver}
 */
export function sshDriver(target, context) {
	const ssh = {
		host: target.host,
		...(target.sshConfig ? { sshConfig: target.sshConfig } : {}),
		controlPath: controlPathFor(join(context.storeDir, "targets", target.name)),
		dir: target.dir,
		pkgVersion: cachedPackageVersion(join(context.storeDir, "targets", "pkg-version.json")),
	};
	const transport = sshTransport(ssh);
	/** @param {import("../driver.mjs").LinkRun} run */
	const farRunDir = (run) => farPaths(target.dir, run.rowId, run.runId).run;
	let installed = false;

	/**
	 * One launch attempt over one channel. Resolves to "missing-agent" when host-agent is not there at
	 * this version (the caller installs it and tries once more).
	 * @param {import("../driver.mjs").LinkRun} run @param {import("../driver.mjs").FollowHandlers} on
	 * @param {(child: import("node:child_process").ChildProcessWithoutNullStreams) => void} attach
	 */
	function launchOnce(run, on, attach) {
		const key = repoKey(run.repo);
		const session = fileDigest(run.sessionFile);
		const config = { ...run.config, repoKey: key, base: run.base, subdir: run.subdir, env: { ...run.config.env, ...run.forwarded }, piCommand: target.pi, session };
		let phase = "asking";
		const handle = farStream(
			transport,
			"run",
			[target.dir, "0", "0"],
			(frame) => {
				if (phase === "asking" && frame.t === "result") {
					phase = "preparing";
					const want = Array.isArray(frame.value.want) ? frame.value.want : [];
					try {
						answer(run, want, session, key, handle.child);
					} catch (error) {
						on.frame({ t: "error", message: error instanceof Error ? error.message : String(error) });
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
			(outcome) => on.close(outcome),
			{ input: [{ t: "config", config }] },
		);
		attach(handle.child);
		return handle;
	}

	/**
	 * Sends what the host asked for: the base commit (git push over the same master) and the session
	 * (frames), then "done".
	 * @param {import("../driver.mjs").LinkRun} run @param {unknown[]} want
	 * @param {{ size: number, sha256: string } | null} session @param {string} key
	 * @param {import("node:child_process").ChildProcessWithoutNullStreams} child
	 */
	function answer(run, want, session, key, child) {
		if (want.includes("base")) pushBase({ repo: run.repo, remote: sshMirrorRemote(ssh, key), rowId: run.rowId, commit: run.base });
		if (want.includes("session") && session) writeSession(child.stdin, run.sessionFile, session.size);
		child.stdin.write(encodeFrame({ t: "done" }));
	}

	return {
		launch(run, on) {
			/** @type {import("../driver.mjs").FollowHandle | undefined} */
			let current;
			let closed = false;
			const first = launchOnce(run, { ...on, close: (outcome) => {
				if (closed || outcome.ended || outcome.failure?.kind !== "missing-agent" || installed) return on.close(outcome);
				installed = true;
				installOverSsh(ssh, target.dir).then(
					() => {
						if (!closed) current = launchOnce(run, on, () => undefined);
					},
					(error) => on.close({ ended: false, failure: { kind: error.kind ?? "remote", reason: `cannot install the board's worker files on ${target.name}: ${error.message}` } }),
				);
			} }, () => undefined);
			current = first;
			return {
				deliver: (message) => current?.deliver(message),
				close() {
					closed = true;
					current?.close();
				},
			};
		},
		follow(run, from, on) {
			return farStream(transport, "follow", [farRunDir(run), String(from.seq), String(from.sessionBytes)], on.frame, on.close);
		},
		async fetchBack(run) {
			fetchRefs({ repo: run.repo, remote: sshMirrorRemote(ssh, repoKey(run.repo)), rowId: run.rowId });
		},
		async stop(run) {
			const result = await callVerb(transport, "stop", [farRunDir(run)]);
			return { status: /** @type {Record<string, unknown> | undefined} */ (result.status) };
		},
	};
}
