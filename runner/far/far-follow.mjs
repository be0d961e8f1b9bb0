// A run's follow on host-agent's channel (far-mux.mjs; and the link itself, in process, for a container's dirs): streams one run's
// files at the target as frames, from where the link's mirror stops (events after a seq, session bytes
// after an offset), and writes the link's inbox messages into the run's inbox, idempotently by message
// id. Ends with an "end" frame (with what the target held: the last seq and the session's size) once the
// runner is gone and the status is terminal; a runner that died without recording its end (a host
// reboot) has its end recorded here first. Every file is read as untrusted (safe-read.mjs): never
// through a symlink, never outside its directory, never whole: events.jsonl in chunks, a line over its
// limit skipped and counted, the session refused past its limit; what the link's copy cannot take is
// said in a "flag" frame naming the file and the limit. A run whose directory is gone ends the follow
// with an error coded far-run-gone (the run cannot finish there). An event goes out as soon as it is
// read: the workspace's snapshot (a "git" frame) is taken beside it, in the host's snapshot lane
// (snapshot-lane.mjs), and only the end waits for the last one.
import { existsSync, lstatSync, mkdirSync, watch } from "node:fs";
import { basename, dirname, join } from "node:path";
import { endRunProcesses, runTag } from "../store/proc.mjs";
import { DIR_MODE, writeJsonAtomic } from "../store/fs-util.mjs";
import { SESSION_CHUNK_BYTES, safeMessageId } from "./frames.mjs";
import { farRunStarting, recordDeath, runnerAlive } from "./far-end.mjs";
import { snapshotWip } from "./git-workspace.mjs";
import { hostSnapshots } from "./snapshot-lane.mjs";
import { MAX_SESSION_BYTES, sizeWords } from "./session-travel.mjs";
import { listInside, readInside, safeStatus, plainFileSize } from "../store/safe-read.mjs";
import { eventReader } from "./far-events.mjs";
import { appendedWords, WORDS_FILE } from "../live-words.mjs";

const SAFETY_POLL_MS = 1000;
/** A runner that has not recorded itself this long after follow began never started. */
const RUNNER_START_GRACE_MS = 15_000;
/** Bytes of events and of session read in one pass while the run goes on (the rest comes next pass). */
const PASS_BYTES = 8 * 1024 * 1024;
/** Frames queued on the way to the link past this wait for it to read (`backlog`). */
const MAX_BACKLOG = 16 * 1024 * 1024;

/**
 * @typedef {object} FollowOptions
 * @property {string} runDir
 * @property {number} fromSeq        last event seq the link has
 * @property {number} sessionFrom    session bytes the link has
 * @property {(frame: import("./frames.mjs").Frame) => void} send
 * @property {(outcome: { gone?: string }) => void} onDone  after "end", or `gone`: the run's files there are gone
 * @property {string} sessionFile    the row's session file there (from the layout, never from run.json)
 * @property {string | null} worktree  the row's workspace (snapshots); null: none here (a container snapshots inside)
 * @property {string} rowId
 * @property {string} [cwdOf]        the workspace run.json's /cwd must lie in (flagged far-tampered when not)
 * @property {() => boolean} [alive] whether the runner lives (default: runner.json, start time verified)
 * @property {() => number} [backlog] bytes sent but not yet taken by the link
 */

/** @param {FollowOptions} options */
export function followRun({ runDir, fromSeq, sessionFrom, send, onDone, sessionFile, worktree, rowId, ...options }) {
	const sessionDir = dirname(sessionFile);
	const alive = options.alive ?? (() => runnerAlive(runDir));
	const eventsPath = join(runDir, "events.jsonl");
	const began = Date.now();
	let sessionOffset = sessionFrom;
	let sessionFlagged = false;
	let lastStatus = "";
	/** @type {Set<string>} */
	const receiptsSent = new Set();
	let lastGit = "";
	let gitDue = true;
	let closed = false;
	/** Ending because the run's files are gone (gone()). */
	let going = false;
	let busy = false;
	let again = false;
	/** run.json as last read (mtime, size, inode), and whether its /cwd was flagged. */
	let cwdSeen = "";
	let cwdFlagged = false;
	/** Where the link's copy of the streamed words got to: words.jsonl's inode and offset. @type {{ ino: number, offset: number } | undefined} */
	let wordsAt;

	const events = eventReader({
		runDir,
		path: eventsPath,
		fromSeq,
		send: (seq, line, type) => {
			if (type === "tool_execution_end" || type === "turn_end" || type === "agent_end") gitDue = true;
			send({ t: "event", seq, line });
		},
		flag: (reason, count) => send({ t: "flag", code: "mirror-incomplete", file: eventsPath, reason, count }),
	});

	const stalled = () => (options.backlog?.() ?? 0) > MAX_BACKLOG;

	/** @param {number} budget @returns {boolean} whether bytes are left to send */
	const readSession = (budget) => {
		const size = plainFileSize(sessionFile);
		if (size < 0 || size === sessionOffset) return false;
		if (size > MAX_SESSION_BYTES) {
			if (!sessionFlagged)
				send({
					t: "flag",
					code: "session-too-large",
					file: sessionFile,
					reason: `${sessionFile} on the target is ${sizeWords(size)}, over the ${sizeWords(MAX_SESSION_BYTES)} a session may be: not mirrored`,
				});
			sessionFlagged = true;
			return false;
		}
		// pi rewrote the file (shorter than what was sent): send it again from the start.
		let reset = size < sessionOffset;
		if (reset) sessionOffset = 0;
		for (let sent = 0; sessionOffset < size && sent < budget; ) {
			const bytes = readInside(
				sessionDir,
				sessionFile,
				sessionOffset,
				Math.min(size, sessionOffset + SESSION_CHUNK_BYTES),
			);
			if (!bytes || bytes.length === 0) return false;
			send({
				t: "session",
				offset: sessionOffset,
				data: bytes.toString("base64"),
				...(reset ? { reset: true } : {}),
			});
			sessionOffset += bytes.length;
			sent += bytes.length;
			reset = false;
		}
		return sessionOffset < size;
	};

	const readReceipts = () => {
		const dir = join(runDir, "receipts");
		for (const name of listInside(dir)) {
			if (!name.endsWith(".json") || name.startsWith(".") || receiptsSent.has(name)) continue;
			try {
				send({
					t: "receipt",
					receipt: JSON.parse(String(readInside(runDir, join(dir, name), 0, 64 * 1024) ?? "")),
				});
				receiptsSent.add(name);
			} catch {
				// Torn, unreadable or not a plain file: tried again on the next pass.
			}
		}
	};

	const readStatus = () => {
		const text =
			plainFileSize(join(runDir, "status.json")) <= 1024 * 1024
				? readInside(runDir, join(runDir, "status.json"))?.toString("utf8")
				: undefined;
		if (text === undefined || text === lastStatus) return;
		try {
			send({ t: "status", status: JSON.parse(text) });
			lastStatus = text;
		} catch {
			// Mid-rename: read again on the next pass.
		}
	};

	/** What the runner appended to words.jsonl since the last pass, as soon as it is there (after the status: fresher). */
	const readWords = () => {
		const got = appendedWords(runDir, wordsAt);
		if (!got) return;
		wordsAt = got;
		if (got.text) send({ t: "words", text: got.text, ...(got.fresh ? { fresh: true } : {}) });
	};

	const wordsOnly = () => {
		if (!closed && !going) readWords();
	};

	/** run.json's /cwd must be in the row's workspace (the runner's layout): else it was changed there. */
	const checkCwd = () => {
		if (cwdFlagged || !options.cwdOf) return;
		const path = join(runDir, "run.json");
		let seen;
		try {
			const stat = lstatSync(path);
			seen = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
		} catch {
			return;
		}
		if (seen === cwdSeen) return;
		const bytes = readInside(runDir, path, 0, 16 * 1024 * 1024);
		if (!bytes) return;
		let cwd;
		try {
			cwd = JSON.parse(bytes.toString("utf8")).cwd;
		} catch {
			// Being written (or not JSON at all): read again when it changes.
			return;
		}
		cwdSeen = seen;
		const inside = typeof cwd === "string" && (cwd === options.cwdOf || cwd.startsWith(`${options.cwdOf}/`));
		cwdFlagged = !inside;
		if (!inside)
			send({
				t: "flag",
				code: "far-tampered",
				file: join(runDir, "run.json"),
				reason: `${join(runDir, "run.json")} on the target names /cwd ${JSON.stringify(cwd)}, not a directory of the row's workspace ${options.cwdOf}: ignored (snapshots read the workspace)`,
			});
	};

	/** Asks the lane for a snapshot when one is due; resolves once it is sent (or failed). */
	const readGit = () => {
		if (!gitDue || !worktree || !existsSync(worktree)) return Promise.resolve();
		gitDue = false;
		const work = worktree;
		return hostSnapshots
			.request(work, () => snapshotWip(work, rowId))
			.then(
				(snap) => {
					const key = `${snap.head} ${snap.wip}`;
					if (key !== lastGit && !closed) send({ t: "git", head: snap.head, wip: snap.wip });
					lastGit = key;
				},
				(error) => {
					if (!closed) send({ t: "error", message: error instanceof Error ? error.message : String(error) });
				},
			);
	};

	/** One pass of reading; `whole`: everything there is (the end), else a bounded part. @param {boolean} whole */
	const drain = (whole) => {
		checkCwd();
		if (whole) {
			while (events.read(Infinity));
			while (readSession(Infinity));
		} else if (!stalled()) {
			if (events.read(PASS_BYTES)) again = true;
			if (readSession(PASS_BYTES)) again = true;
		}
		readReceipts();
		readStatus();
		readWords();
	};

	/** A dir of the run's (receipts/, inbox/), made in the run's dir only: a run dir that is gone stays gone. @param {string} name */
	function subdir(name) {
		if (!runDirThere()) throw new Error(`the run's directory on the target is gone: ${runDir}`);
		try {
			mkdirSync(join(runDir, name), { mode: DIR_MODE });
		} catch (error) {
			if (/** @type {NodeJS.ErrnoException} */ (error).code !== "EEXIST") throw error;
		}
	}

	/** The run's own directory is still there (not deleted, not replaced by something else). */
	function runDirThere() {
		try {
			return lstatSync(runDir).isDirectory();
		} catch {
			return false;
		}
	}

	const pass = async () => {
		if (closed || going) return;
		if (busy) {
			again = true;
			return;
		}
		busy = true;
		try {
			do {
				again = false;
				if (!runDirThere()) return gone(`the run's directory on the target is gone: ${runDir}`);
				const living = alive();
				drain(!living);
				if (!living) {
					let status = safeStatus(runDir);
					// A runner gone without its end (killed, host rebooted), or one that never recorded itself and
					// has no process left past the start grace: record it, then report it.
					const ranOrLate =
						lstatOk(join(runDir, "runner.json")) ||
						(Date.now() - began > RUNNER_START_GRACE_MS && !farRunStarting(runDir));
					if (status && typeof status.endedAt !== "number" && ranOrLate)
						status = await recordDeath(runDir, { alive: options.alive });
					if (!status && ranOrLate)
						return gone(`the run's status on the target is gone or unreadable: ${join(runDir, "status.json")}`);
					if (status && typeof status.endedAt === "number") {
						drain(true);
						// The end says what the target held: its last snapshot is sent first.
						gitDue = true;
						await readGit();
						if (closed) return;
						const held = {
							seq: events.lastSeq,
							sessionBytes: Math.max(
								0,
								Math.min(plainFileSize(sessionFile), sessionFlagged ? sessionOffset : Infinity),
							),
						};
						send({ t: "end", status, held });
						close({});
						return;
					}
				}
				void readGit();
			} while (again && !closed);
		} finally {
			busy = false;
		}
	};

	/**
	 * The run cannot finish here (its files are gone): what is left of its processes ends, and the link
	 * is told why. @param {string} reason
	 */
	async function gone(reason) {
		if (going) return;
		going = true;
		await endRunProcesses(runTag(basename(runDir), "target"), { graceMs: 200 });
		send({ t: "error", code: "far-run-gone", message: reason });
		close({ gone: reason });
	}

	/** @type {import("node:fs").FSWatcher[]} */
	const watchers = [];
	const poll = setInterval(() => void pass(), SAFETY_POLL_MS);
	try {
		subdir("receipts");
	} catch {
		// A run dir that is gone: the first pass says so.
	}
	for (const dir of [runDir, join(runDir, "receipts"), sessionDir]) {
		try {
			// Grown words (up to 40 appends a second while a row streams) are read alone, not with a whole pass.
			const watcher = watch(dir, (_event, name) =>
				dir === runDir && name === WORDS_FILE ? wordsOnly() : void pass(),
			);
			watcher.on("error", () => undefined);
			watchers.push(watcher);
		} catch {
			// The safety poll covers a directory we cannot watch.
		}
	}
	void pass();

	/** @param {{ gone?: string }} outcome */
	function close(outcome) {
		if (closed) return;
		closed = true;
		clearInterval(poll);
		for (const watcher of watchers) watcher.close();
		onDone(outcome);
	}

	return {
		/**
		 * Writes a message from the link into the inbox unless it is already there, claimed or answered.
		 * @param {Record<string, unknown>} message
		 */
		deliver(message) {
			if (!safeMessageId(message.id)) return send({ t: "error", message: `refused inbox message with a bad id` });
			const name = `${message.id}.json`;
			if (["inbox", "claimed", "receipts"].some((sub) => lstatOk(join(runDir, sub, name)))) return;
			try {
				subdir("inbox");
				writeJsonAtomic(join(runDir, "inbox", name), message);
			} catch (error) {
				send({
					t: "error",
					message: `cannot write ${join(runDir, "inbox", name)}: ${error instanceof Error ? error.message : String(error)}`,
				});
			}
		},
		/** Re-checks now (the link learnt something, e.g. the container exited). */
		poke: () => void pass(),
		/** Stops following (the link went away); nothing is sent. */
		close: () => close({}),
	};
}

/** Whether a path exists (not following a symlink at its end). @param {string} path */
function lstatOk(path) {
	try {
		lstatSync(path);
		return true;
	} catch {
		return false;
	}
}
