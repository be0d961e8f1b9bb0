// host-agent.mjs follow (and the link itself, in process, for a container's dirs): streams one run's
// files at the target as frames, from where the link's mirror stops (events after a seq, session bytes
// after an offset), and writes the link's inbox messages into the run's inbox, idempotently by message
// id. Ends with an "end" frame once the runner is gone and the status is terminal; a runner that died
// without recording its end (a host reboot) has its end recorded here first. Every file is read as
// untrusted (safe-read.mjs): never through a symlink, never outside its directory.
import { existsSync, readFileSync, watch } from "node:fs";
import { dirname, join } from "node:path";
import { writeJsonAtomic, ensureDir } from "../store/fs-util.mjs";
import { SESSION_CHUNK_BYTES, safeMessageId } from "./frames.mjs";
import { recordDeath, runnerAlive } from "./far-end.mjs";
import { snapshotWip } from "./git-workspace.mjs";
import { listInside, readInside, safeStatus, sizeInside } from "../store/safe-read.mjs";

const SAFETY_POLL_MS = 1000;
/** Events after which the worktree may have changed (tools ran, a turn or the run ended). */
const GIT_EVENTS = new Set(["tool_execution_end", "turn_end", "agent_end"]);

/**
 * @typedef {object} FollowOptions
 * @property {string} runDir
 * @property {number} fromSeq        last event seq the link has
 * @property {number} sessionFrom    session bytes the link has
 * @property {(frame: import("./frames.mjs").Frame) => void} send
 * @property {() => void} onDone
 * @property {string} [sessionFile]  default: run.json's (ssh: written by host-agent itself)
 * @property {string | null} [worktree]  null: no git snapshots here (a container snapshots inside)
 * @property {string} [rowId]
 * @property {() => boolean} [alive] whether the runner lives (default: runner.json, start time verified)
 */

/** @param {FollowOptions} options */
export function followRun({ runDir, fromSeq, sessionFrom, send, onDone, ...options }) {
	const needConfig = options.sessionFile === undefined || options.worktree === undefined || (options.worktree !== null && options.rowId === undefined);
	const config = needConfig ? JSON.parse(readFileSync(join(runDir, "run.json"), "utf8")) : {};
	const rowId = String(options.rowId ?? config.rowId);
	const sessionFile = options.sessionFile ?? String(config.sessionFile);
	const sessionDir = dirname(sessionFile);
	const worktree = options.worktree === undefined ? String(config.cwd) : options.worktree;
	const alive = options.alive ?? (() => runnerAlive(runDir));
	let lastSeq = fromSeq;
	let eventsOffset = 0;
	let sessionOffset = sessionFrom;
	let lastStatus = "";
	/** @type {Set<string>} */
	const receiptsSent = new Set();
	let lastGit = "";
	let gitDue = true;
	let closed = false;
	let busy = false;
	let again = false;

	const readEvents = () => {
		const path = join(runDir, "events.jsonl");
		const size = sizeInside(runDir, path);
		if (size <= eventsOffset) return;
		const bytes = readInside(runDir, path, eventsOffset, size);
		const end = bytes ? bytes.lastIndexOf(0x0a) : -1;
		if (!bytes || end < 0) return;
		eventsOffset += end + 1;
		for (const line of bytes.subarray(0, end).toString("utf8").split("\n")) {
			let seq;
			try {
				seq = JSON.parse(line).seq;
			} catch {
				continue;
			}
			if (typeof seq !== "number" || seq <= lastSeq) continue;
			lastSeq = seq;
			const type = /"type":"([a-z_]+)"/.exec(line)?.[1] ?? "";
			if (GIT_EVENTS.has(type)) gitDue = true;
			send({ t: "event", seq, line });
		}
	};

	const readSession = () => {
		const size = sizeInside(sessionDir, sessionFile);
		if (size < 0 || size === sessionOffset) return;
		// pi rewrote the file (shorter than what was sent): send it again from the start.
		let reset = size < sessionOffset;
		if (reset) sessionOffset = 0;
		while (sessionOffset < size) {
			const bytes = readInside(sessionDir, sessionFile, sessionOffset, Math.min(size, sessionOffset + SESSION_CHUNK_BYTES));
			if (!bytes || bytes.length === 0) break;
			send({ t: "session", offset: sessionOffset, data: bytes.toString("base64"), ...(reset ? { reset: true } : {}) });
			sessionOffset += bytes.length;
			reset = false;
		}
	};

	const readReceipts = () => {
		const dir = join(runDir, "receipts");
		for (const name of listInside(dir)) {
			if (!name.endsWith(".json") || name.startsWith(".") || receiptsSent.has(name)) continue;
			try {
				send({ t: "receipt", receipt: JSON.parse(String(readInside(runDir, join(dir, name)) ?? "")) });
				receiptsSent.add(name);
			} catch {
				// Torn, unreadable or not a plain file: tried again on the next pass.
			}
		}
	};

	const readStatus = () => {
		const text = readInside(runDir, join(runDir, "status.json"))?.toString("utf8");
		if (text === undefined || text === lastStatus) return;
		try {
			send({ t: "status", status: JSON.parse(text) });
			lastStatus = text;
		} catch {
			// Mid-rename: read again on the next pass.
		}
	};

	const readGit = () => {
		if (!gitDue || !worktree || !existsSync(worktree)) return;
		gitDue = false;
		try {
			const snap = snapshotWip(worktree, rowId);
			const key = `${snap.head} ${snap.wip}`;
			if (key !== lastGit) send({ t: "git", head: snap.head, wip: snap.wip });
			lastGit = key;
		} catch (error) {
			send({ t: "error", message: error instanceof Error ? error.message : String(error) });
		}
	};

	const drain = () => {
		readEvents();
		readReceipts();
		readSession();
		readStatus();
	};

	const pass = async () => {
		if (closed) return;
		if (busy) {
			again = true;
			return;
		}
		busy = true;
		try {
			do {
				again = false;
				const living = alive();
				drain();
				if (!living) {
					let status = safeStatus(runDir);
					// A runner gone without its end (killed, host rebooted): record it, then report it.
					if (status && typeof status.endedAt !== "number" && existsSync(join(runDir, "runner.json"))) status = await recordDeath(runDir, { alive: options.alive });
					if (status && typeof status.endedAt === "number") {
						drain();
						gitDue = true;
						readGit();
						send({ t: "end", status });
						close();
						return;
					}
				}
				readGit();
			} while (again && !closed);
		} finally {
			busy = false;
		}
	};

	ensureDir(join(runDir, "receipts"));
	/** @type {import("node:fs").FSWatcher[]} */
	const watchers = [];
	for (const dir of [runDir, join(runDir, "receipts"), sessionDir]) {
		try {
			const watcher = watch(dir, () => void pass());
			watcher.on("error", () => undefined);
			watchers.push(watcher);
		} catch {
			// The safety poll covers a directory we cannot watch.
		}
	}
	const poll = setInterval(() => void pass(), SAFETY_POLL_MS);
	void pass();

	function close() {
		if (closed) return;
		closed = true;
		clearInterval(poll);
		for (const watcher of watchers) watcher.close();
		onDone();
	}

	return {
		/**
		 * Writes a message from the link into the inbox unless it is already there, claimed or answered.
		 * @param {Record<string, unknown>} message
		 */
		deliver(message) {
			if (!safeMessageId(message.id)) return send({ t: "error", message: `refused inbox message with a bad id` });
			const name = `${message.id}.json`;
			if (["inbox", "claimed", "receipts"].some((sub) => existsSync(join(runDir, sub, name)))) return;
			ensureDir(join(runDir, "inbox"));
			writeJsonAtomic(join(runDir, "inbox", name), message);
		},
		/** Re-checks now (the link learnt something, e.g. the container exited). */
		poke: () => void pass(),
		close,
	};
}
