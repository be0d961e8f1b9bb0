// host-agent.mjs follow: streams one run's files at the target to the link as frames, from where the
// link's mirror stops (events after a seq, session bytes after an offset), and writes the link's inbox
// messages into the run's inbox, idempotently by message id. Ends with an "end" frame once the runner
// is gone and the status is terminal; a runner that died without recording its end (a host reboot) has
// its end recorded here first.
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, watch } from "node:fs";
import { dirname, join } from "node:path";
import { writeJsonAtomic, ensureDir } from "./fs-util.mjs";
import { SESSION_CHUNK_BYTES, safeMessageId } from "./frames.mjs";
import { recordFarEnd, runnerAlive } from "./far-end.mjs";
import { fileSize, safeStatus } from "./far-run.mjs";
import { snapshotWip } from "./git-workspace.mjs";

const SAFETY_POLL_MS = 1000;

/** Bytes [from, to) of a file. @param {string} path @param {number} from @param {number} to */
function readRange(path, from, to) {
	const buffer = Buffer.alloc(to - from);
	const fd = openSync(path, "r");
	try {
		const read = readSync(fd, buffer, 0, buffer.length, from);
		return buffer.subarray(0, read);
	} finally {
		closeSync(fd);
	}
}
/** Events after which the worktree may have changed (tools ran, a turn or the run ended). */
const GIT_EVENTS = new Set(["tool_execution_end", "turn_end", "agent_end"]);

/**
 * @param {{ runDir: string, fromSeq: number, sessionFrom: number, send: (frame: import("./frames.mjs").Frame) => void, onDone: () => void }} options
 */
export function followRun({ runDir, fromSeq, sessionFrom, send, onDone }) {
	const config = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8"));
	const sessionFile = String(config.sessionFile);
	const worktree = String(config.cwd);
	const rowId = String(config.rowId);
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
		const size = fileSize(path);
		if (size <= eventsOffset) return;
		const bytes = readRange(path, eventsOffset, size);
		const end = bytes.lastIndexOf(0x0a);
		if (end < 0) return;
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
		const size = fileSize(sessionFile);
		if (size < 0 || size === sessionOffset) return;
		// pi rewrote the file (shorter than what was sent): send it again from the start.
		let reset = size < sessionOffset;
		if (reset) sessionOffset = 0;
		while (sessionOffset < size) {
			const bytes = readRange(sessionFile, sessionOffset, Math.min(size, sessionOffset + SESSION_CHUNK_BYTES));
			if (bytes.length === 0) break;
			send({ t: "session", offset: sessionOffset, data: bytes.toString("base64"), ...(reset ? { reset: true } : {}) });
			sessionOffset += bytes.length;
			reset = false;
		}
	};

	const readReceipts = () => {
		let names;
		try {
			names = readdirSync(join(runDir, "receipts")).filter((n) => n.endsWith(".json") && !n.startsWith(".")).sort();
		} catch {
			return;
		}
		for (const name of names) {
			if (receiptsSent.has(name)) continue;
			try {
				send({ t: "receipt", receipt: JSON.parse(readFileSync(join(runDir, "receipts", name), "utf8")) });
				receiptsSent.add(name);
			} catch {
				// Torn or unreadable: tried again on the next pass.
			}
		}
	};

	const readStatus = () => {
		let text;
		try {
			text = readFileSync(join(runDir, "status.json"), "utf8");
		} catch {
			return;
		}
		if (text === lastStatus) return;
		try {
			send({ t: "status", status: JSON.parse(text) });
			lastStatus = text;
		} catch {
			// Mid-rename: read again on the next pass.
		}
	};

	const readGit = () => {
		if (!gitDue || !existsSync(worktree)) return;
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
				const alive = runnerAlive(runDir);
				readEvents();
				readReceipts();
				readSession();
				readStatus();
				if (!alive) {
					let status = safeStatus(runDir);
					// A runner gone without its end (killed, host rebooted): record it, then report it.
					if (status && typeof status.endedAt !== "number" && existsSync(join(runDir, "runner.json"))) status = await recordFarEnd(runDir, "died");
					if (status && typeof status.endedAt === "number") {
						readEvents();
						readReceipts();
						readSession();
						readStatus();
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
	for (const dir of [runDir, join(runDir, "receipts"), dirname(sessionFile)]) {
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
		close,
	};
}
