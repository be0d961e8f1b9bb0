// The local inbox of a target run, as its link serves it: every message dropped there (reply, steer,
// answer, stop) is forwarded to the target, which writes it into the far inbox once per id; the local
// file stays in inbox/ until its receipt has come back, then moves to claimed/. A reconnect sends
// again what is still waiting (the target drops what it already has). What cannot be a message is
// answered here, as the runner would.
import { existsSync, renameSync, statSync, watch } from "node:fs";
import { join } from "node:path";
import { ensureDir } from "../store/fs-util.mjs";
import { claimMessages, inboxDir, inboxNames, rejectionReceipt, writeReceipt } from "../life/inbox.mjs";
import { MAX_MESSAGE_BYTES } from "../life/reasons.mjs";
import { safeMessageId } from "../far/frames.mjs";
import { readJsonObject } from "../store/safe-read.mjs";

const POLL_MS = 1000;

/**
 * @param {string} runDir
 * @param {{ onStop?: () => void }} [hooks] a stop is waiting (the row shows "stop requested")
 */
export function openInbox(runDir, hooks = {}) {
	/** @type {((message: Record<string, unknown>) => void) | undefined} */
	let deliver;
	/** Ids sent on the current connection. */
	const sent = new Set();
	ensureDir(inboxDir(runDir));

	/** @param {string} name @returns {Record<string, unknown> | "bad"} */
	function read(name) {
		const path = join(inboxDir(runDir), name);
		try {
			if (statSync(path).size > 6 * MAX_MESSAGE_BYTES + 4096) return "bad";
			const value = readJsonObject(path);
			const id = name.slice(0, -".json".length);
			if (!value || value.id !== id || !safeMessageId(id)) return "bad";
			if (value.kind !== "stop" && (value.kind !== "message" || typeof value.text !== "string")) return "bad";
			return value;
		} catch {
			return "bad";
		}
	}

	function pass() {
		for (const name of inboxNames(runDir)) {
			const id = name.slice(0, -".json".length);
			if (sent.has(id)) continue;
			const message = read(name);
			if (message === "bad") {
				// Claimed and answered here, as the runner would: nothing to forward.
				rejectOne(name, id);
				continue;
			}
			if (message.kind === "stop") hooks.onStop?.();
			if (!deliver) continue;
			sent.add(id);
			deliver(message);
		}
	}

	/** @param {string} name @param {string} id */
	function rejectOne(name, id) {
		try {
			ensureDir(join(runDir, "claimed"));
			renameSync(join(inboxDir(runDir), name), join(runDir, "claimed", name));
		} catch {
			return;
		}
		writeReceipt(runDir, rejectionReceipt(id, "malformed", Date.now()));
	}

	/** @param {import("../life/inbox.mjs").InboxMessage | { id: string, rejected: import("../life/reasons.mjs").ReceiptCode, detail?: string }} claimed */
	function answerBad(claimed) {
		if ("rejected" in claimed)
			writeReceipt(runDir, rejectionReceipt(claimed.id, claimed.rejected, Date.now(), "", claimed.detail));
	}

	/** @type {import("node:fs").FSWatcher | undefined} */
	let watcher;
	try {
		watcher = watch(inboxDir(runDir), () => pass());
		watcher.on("error", () => undefined);
	} catch {
		// The poll covers it.
	}
	const poll = setInterval(pass, POLL_MS);

	return {
		/** Forwards through `send` from now on (a new connection): everything waiting goes again. @param {(message: Record<string, unknown>) => void} send */
		attach(send) {
			deliver = send;
			sent.clear();
			pass();
		},
		/** The connection is gone: hold messages until the next one. */
		detach() {
			deliver = undefined;
		},
		/** A receipt came back: the message has been served. @param {string} id */
		served(id) {
			sent.delete(id);
			const from = join(inboxDir(runDir), `${id}.json`);
			if (!existsSync(from)) return;
			try {
				ensureDir(join(runDir, "claimed"));
				renameSync(from, join(runDir, "claimed", `${id}.json`));
			} catch {
				// Moved already.
			}
		},
		/** Whether a stop is waiting (not yet answered). */
		stopWaiting() {
			return inboxNames(runDir).some((name) => {
				const message = read(name);
				return message !== "bad" && message.kind === "stop";
			});
		},
		/** Stops watching, answering nothing (the run went back to the queue: its next owner serves the inbox). */
		close() {
			clearInterval(poll);
			watcher?.close();
			deliver = undefined;
		},
		/**
		 * The run is over: whatever still waits is claimed and answered (a stop "delivered", the rest
		 * "run ended"), so a reply starts a new run instead.
		 */
		finish() {
			clearInterval(poll);
			watcher?.close();
			for (const message of claimMessages(runDir)) {
				if ("rejected" in message) answerBad(message);
				else if (!existsSync(join(runDir, "receipts", `${message.id}.json`))) {
					writeReceipt(
						runDir,
						message.kind === "stop"
							? { id: message.id, status: "delivered", at: Date.now(), preview: "stop" }
							: rejectionReceipt(message.id, "run-ended", Date.now()),
					);
				}
			}
		},
	};
}
