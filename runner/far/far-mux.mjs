// host-agent.mjs link <dir>: the one long-lived channel a target's link keeps to the host, for every
// run it owns there (docs/engine-targets.md, "One link per target"). Frames about a run carry its id in
// `run`: the link launches (config, then what the host asked for, then done), follows from its resume
// points, forwards inbox messages and stops; the host answers with each run's stream, as host-agent's
// one-run verbs do, tagged. The channel's own frames say the host's load (hello, then every few
// seconds), which a pool's placement reads. EOF on stdin: the link or its connection is gone; every
// run goes on without us.
import { cpus, loadavg } from "node:os";
import { encodeFrame, readFrames } from "./frames.mjs";
import { followRun } from "./far-follow.mjs";
import { stopFarRun } from "./far-end.mjs";
import { launchNeeds, launchRun } from "./far-launch.mjs";
import { checkFarConfig } from "./far-run.mjs";
import { sessionReceiver } from "./session-travel.mjs";
import { BoardError } from "../life/reasons.mjs";
import { farRunOf, targetPaths } from "../store/store-layout.mjs";

/** How often the host's load goes to the link. */
export const STAT_MS = 5000;

/**
 * @typedef {object} MuxRun
 * @property {ReturnType<typeof followRun>} [follower]
 * @property {{ config: import("./far-run.mjs").FarRunConfig, receiver?: ReturnType<typeof sessionReceiver>, from: { seq: number, bytes: number } }} [launch]
 * @property {Record<string, unknown>[]} waiting  inbox messages that came before the follow started
 */

/**
 * Serves one link on stdin/stdout (or the streams given, for tests).
 * @param {string} dir the target's dir (absolute)
 * @param {{ agent: string, input?: NodeJS.ReadableStream, output?: NodeJS.WritableStream, onEnd?: () => void }} options
 */
export function serveLink(dir, options) {
	const output = options.output ?? process.stdout;
	const input = options.input ?? process.stdin;
	/** @type {Map<string, MuxRun>} */
	const runs = new Map();
	/** @param {import("./frames.mjs").Frame} frame */
	const send = (frame) => void output.write(encodeFrame(frame));
	const load = () => ({ load: Math.round((loadavg()[0] ?? 0) * 100) / 100, cpus: cpus().length || 1 });

	/** A run the host cannot go on with: its close frame, in the error's words and code. @param {string} run @param {string} kind @param {unknown} error */
	const fail = (run, kind, error) => {
		runs.delete(run);
		const code = error instanceof BoardError ? error.code : undefined;
		send({
			t: "close",
			run,
			kind,
			message: error instanceof Error ? error.message : String(error),
			...(code ? { code } : {}),
		});
	};

	/** @param {string} run @param {string} runDir @param {{ seq: number, bytes: number }} from */
	function follow(run, runDir, from) {
		const entry = runs.get(run) ?? { waiting: [] };
		runs.set(run, entry);
		entry.follower?.close();
		try {
			const far = farRunOf(runDir);
			if (!far) throw new Error(`not a run's directory in a target's store: ${runDir}`);
			const paths = targetPaths(far.dir, far.rowId, far.runId);
			const follower = followRun({
				runDir,
				fromSeq: from.seq,
				sessionFrom: from.bytes,
				send: (frame) => send({ ...frame, run }),
				sessionFile: paths.session,
				worktree: paths.work,
				rowId: far.rowId,
				cwdOf: paths.work,
				// Shared by every run on the channel: a slow link slows each run's session pieces.
				backlog: () => /** @type {{ writableLength?: number }} */ (output).writableLength ?? 0,
				onDone: (outcome) => {
					if (runs.get(run)?.follower !== follower) return;
					runs.delete(run);
					// Its files there are gone: nothing there can finish it (the link ends the run).
					if (outcome.gone) send({ t: "close", run, kind: "gone", message: outcome.gone, code: "far-run-gone" });
				},
			});
			entry.follower = follower;
			for (const message of entry.waiting.splice(0)) follower.deliver(message);
		} catch (error) {
			fail(run, "remote", `cannot follow ${runDir}: ${error instanceof Error ? error.message : String(error)}`);
		}
	}

	/** @param {string} run @param {Record<string, unknown>} raw */
	async function launch(run, raw) {
		/** @type {import("./far-run.mjs").FarRunConfig} */
		let config;
		let needs;
		// Held while the host is asked (pi's version, a node start): an unfollow meanwhile gives the launch up.
		/** @type {MuxRun} */
		const asking = { waiting: runs.get(run)?.waiting ?? [] };
		runs.set(run, asking);
		try {
			config = checkFarConfig(raw);
			if (config.runId !== run) throw new Error("bad run config: runId is not the frame's run");
			needs = await launchNeeds(dir, config);
		} catch (error) {
			if (runs.get(run) === asking) fail(run, "remote", error);
			return;
		}
		if (runs.get(run) !== asking) return;
		const from = { seq: 0, bytes: 0 };
		if (needs.started) {
			send({ t: "result", run, value: { started: true, runDir: needs.runDir } });
			return follow(run, needs.runDir, from);
		}
		/** @type {MuxRun} */
		const entry = { waiting: asking.waiting, launch: { config, from } };
		try {
			if (needs.want.includes("session") && config.session)
				entry.launch = { config, from, receiver: sessionReceiver(needs.session, config.session) };
		} catch (error) {
			return fail(run, "remote", error);
		}
		runs.set(run, entry);
		send({ t: "result", run, value: { want: needs.want, runDir: needs.runDir } });
	}

	/** Everything the host asked for has come: prepare, start, follow. @param {string} run */
	async function launched(run) {
		const entry = runs.get(run);
		const pending = entry?.launch;
		if (!entry || !pending) return;
		entry.launch = undefined;
		try {
			await pending.receiver?.finish();
			// Unfollowed meanwhile (the link gave the launch up after a stop): nothing starts.
			const runDir = await launchRun(dir, pending.config, () => runs.get(run) === entry);
			send({ t: "result", run, value: { started: true, runDir } });
			follow(run, runDir, pending.from);
		} catch (error) {
			if (runs.get(run) === entry) fail(run, "remote", error);
		}
	}

	/** @param {string} run @param {string} row */
	async function stop(run, row) {
		try {
			const result = await stopFarRun(targetPaths(dir, row, run).run);
			send({ t: "result", run, value: { stopped: true, status: result.status, left: result.left } });
		} catch (error) {
			send({
				t: "result",
				run,
				value: { stopped: false, error: error instanceof Error ? error.message : String(error) },
			});
		}
	}

	// What waited for the link to read goes on once it has.
	output.on("drain", () => {
		for (const entry of runs.values()) entry.follower?.poke();
	});
	send({ t: "hello", agent: options.agent, pid: process.pid, ...load() });
	const stat = setInterval(() => send({ t: "stat", ...load(), at: Date.now() }), STAT_MS);
	stat.unref?.();

	readFrames(
		input,
		(frame) => {
			const run = frame.run;
			if (!run) return;
			switch (frame.t) {
				case "follow":
					return follow(run, targetPaths(dir, frame.row, run).run, { seq: frame.seq, bytes: frame.bytes });
				case "launch":
					return void launch(run, frame.config);
				case "session": {
					const receiver = runs.get(run)?.launch?.receiver;
					try {
						receiver?.chunk(frame.offset, frame.data);
					} catch (error) {
						fail(run, "remote", error);
					}
					return;
				}
				case "done":
					return void launched(run);
				case "inbox": {
					const entry = runs.get(run);
					if (entry?.follower) entry.follower.deliver(frame.message);
					else if (entry) entry.waiting.push(frame.message);
					return;
				}
				case "stop":
					return void stop(run, frame.row);
				case "unfollow": {
					const entry = runs.get(run);
					runs.delete(run);
					entry?.follower?.close();
					return;
				}
				default:
					return;
			}
		},
		{
			onEnd: () => {
				clearInterval(stat);
				for (const entry of runs.values()) entry.follower?.close();
				runs.clear();
				(options.onEnd ?? (() => process.exit(0)))();
			},
		},
	);
}
