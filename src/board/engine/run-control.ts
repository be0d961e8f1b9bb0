/**
 * Talking to a run: one reply for every state and a stop that asks before it kills. Decisions are
 * taken under the row lock, so two replies never start two workers on one session file; delivery
 * itself goes through the run's inbox, answered by its runner (runner/life/inbox.mjs).
 */
import { existsSync } from "node:fs";
import { touchNotify } from "../../../runner/store/fs-util.mjs";
import { dropMessage, inboxNames, receiptPath } from "../../../runner/life/inbox.mjs";
import { claimEntry, queuedEntryName } from "../../../runner/life/queue.mjs";
import { settleUnowned } from "../../../runner/life/orphan.mjs";
import { endRun, stoppedQueuedEnd } from "../../../runner/life/run-end.mjs";
import { runOwner } from "../../../runner/life/run-owner.mjs";
import { endRunProcesses } from "../../../runner/store/proc.mjs";
import { withRowLock } from "../../../runner/store/row-lock.mjs";
import { runEnded } from "../../../runner/life/state-rules.mjs";
import { checkMessage } from "./dispatch-checks.ts";
import type { EngineContext } from "./engine-context.ts";
import { resumeRun } from "./launch.ts";
import { readRow, requireMeta } from "./row-read.ts";
import { nodeCommand } from "./commands.ts";
import { BoardError } from "../../../runner/life/reasons.mjs";
import { FileCache, readReceiptFile, readStatus } from "./store.ts";
import type { BoardRow, Receipt, ReplyOptions, ReplyResult, StopResult } from "./types.ts";

const DEFAULT_RECEIPT_WAIT_MS = 15_000;

type Decision = { kind: "new-run" } | { kind: "inbox"; runDir: string; messageId: string; queued: boolean };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const DEFAULT_STOP_GRACE_MS = 3000;

export function controlRun(ctx: EngineContext) {
	const { paths } = ctx;
	const stopGraceMs = ctx.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
	const spawnWith = { node: nodeCommand(ctx.env), env: ctx.env };

	async function decide(id: string, text: string, options: ReplyOptions): Promise<Decision> {
		const meta = requireMeta(ctx, id);
		if (meta.archived) throw new BoardError("archived", `row ${id} is archived; unarchive it before replying`);
		const row = readRow(ctx, id);
		if (row.state === "error")
			throw new BoardError("unreadable-row", `row ${id} cannot be read: ${row.error ?? "error"}`);
		const runDir = paths.run(id, meta.currentRunId);
		const status = readStatus(runDir, new FileCache());
		let owner = runOwner(paths.root, runDir, status);
		// Nobody owns it: a run whose claimer died before its runner started waits in the queue again (it
		// takes the message as a queued run); a target run whose link died goes on there (a new link takes
		// the message); any other has its end recorded, and the reply starts a new run.
		if (!runEnded(status) && owner === "none") {
			const outcome = await settleUnowned(paths.root, runDir, { target: meta.target, spawnWith, lockHeld: true });
			if (outcome === "relinked") owner = "runner";
			if (outcome === "requeued") owner = "queue";
		}
		if (runEnded(status) || owner === "none") {
			resumeRun(ctx, meta, text);
			return { kind: "new-run" };
		}
		const deliverAs = options.followUp ? "followUp" : "steer";
		const messageId = dropMessage(runDir, { kind: "message", text, deliverAs });
		touchNotify(paths.root, id);
		return { kind: "inbox", runDir, messageId, queued: owner === "queue" };
	}

	async function waitReceipt(runDir: string, messageId: string, timeoutMs: number): Promise<Receipt | undefined> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const receipt = readReceiptFile(receiptPath(runDir, messageId));
			if (receipt) return { ...receipt };
			if (Date.now() > deadline) return undefined;
			await sleep(25);
		}
	}

	async function reply(id: string, text: string, options: ReplyOptions = {}): Promise<ReplyResult> {
		requireMeta(ctx, id);
		checkMessage(text);
		// A message that reaches a run as it ends comes back rejected "run-ended": then the row is
		// finished and the same text starts a new run. Twice at most: the second decision sees the ended run.
		for (let attempt = 0; attempt < 3; attempt++) {
			const decision = await withRowLock(paths.row(id), () => decide(id, text, options));
			if (decision.kind === "new-run") return { row: readRow(ctx, id), delivery: "new-run" };
			if (decision.queued) return { row: readRow(ctx, id), delivery: "queued" };
			const receipt = await waitReceipt(
				decision.runDir,
				decision.messageId,
				options.receiptTimeoutMs ?? DEFAULT_RECEIPT_WAIT_MS,
			);
			if (!receipt) return { row: readRow(ctx, id), delivery: "pending" };
			if (receipt.status === "delivered") return { row: readRow(ctx, id), delivery: receipt.as ?? "steer", receipt };
			if (receipt.code !== "run-ended")
				throw new BoardError("not-delivered", `message not delivered: ${receipt.reason ?? "rejected"}`);
			// Wait for the runner to record the end before deciding again.
			await waitEnded(id, 10_000);
		}
		throw new BoardError("busy", `row ${id} kept ending before the message could be delivered; try again`);
	}

	async function waitEnded(id: string, timeoutMs: number): Promise<BoardRow> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const row = readRow(ctx, id);
			const status = row.runDir ? readStatus(row.runDir, new FileCache()) : undefined;
			// The row was read before the status: once the status says it ended, read the row again.
			if (status && runEnded(status)) return readRow(ctx, id);
			if (!status || row.state === "error") return row;
			if (Date.now() > deadline) return row;
			await sleep(50);
		}
	}

	/** The row once its link noted the stop (or after a few seconds: the link may be starting). */
	async function waitStopNoted(id: string, runDir: string): Promise<BoardRow> {
		const deadline = Date.now() + 3000;
		while (Date.now() < deadline) {
			const status = readStatus(runDir, new FileCache());
			if (status.stopRequested || runEnded(status)) break;
			await sleep(50);
		}
		return readRow(ctx, id);
	}

	/** Queued: take the run out of the queue (its owner now) and record the stop; waiting replies get their receipts. */
	function stopQueued(runDir: string, runId: string): boolean {
		const name = queuedEntryName(paths.root, runId);
		if (!name || !claimEntry(paths.root, name, runDir, "stop")) return false;
		endRun(runDir, stoppedQueuedEnd());
		return true;
	}

	/** What the stop did, from the run's status before and after: never a guess from the row's words. */
	async function stopOutcome(id: string): Promise<StopResult> {
		let endedBefore = false;
		const row = await stopRun(id, () => {
			endedBefore = true;
		});
		if (endedBefore) return { row, outcome: "ended" };
		const status = row.runDir ? readStatus(row.runDir, new FileCache()) : undefined;
		return { row, outcome: !status || runEnded(status) ? "stopped" : "requested" };
	}

	async function stopRun(id: string, alreadyEnded: () => void): Promise<BoardRow> {
		requireMeta(ctx, id);
		const target = await withRowLock(paths.row(id), async () => {
			const meta = requireMeta(ctx, id);
			const runDir = paths.run(id, meta.currentRunId);
			const status = readStatus(runDir, new FileCache());
			if (runEnded(status)) return void alreadyEnded();
			if (stopQueued(runDir, status.runId)) return undefined;
			const owner = runOwner(paths.root, runDir, status);
			// Nobody owns it: a target run gets a new link, which ends it at the target (a one-shot stop
			// there) on the stop below; any other is recorded stopped.
			const onTarget = meta.target !== undefined;
			if (
				owner === "none" &&
				(await settleUnowned(paths.root, runDir, {
					target: meta.target,
					how: "stopped",
					spawnWith,
					lockHeld: true,
				})) !== "relinked"
			)
				return undefined;
			dropMessage(runDir, { kind: "stop" });
			return { runDir, onTarget };
		});
		if (!target) return readRow(ctx, id);
		// An unreachable target keeps the stop: its link delivers it when the target is back (and the row
		// says "stop requested" from the moment its link took it: a moment, it watches the inbox).
		if (target.onTarget && readRow(ctx, id).unreachable) return waitStopNoted(id, target.runDir);
		const row = await waitEnded(id, stopGraceMs * 2 + 8000);
		const status = readStatus(target.runDir, new FileCache());
		if (runEnded(status)) return readRow(ctx, id);
		if (target.onTarget) return row;
		// The runner did not answer (hung or starting): end every process of the run, then record it.
		await endRunProcesses(status.runId);
		await settleUnowned(paths.root, target.runDir, { how: "stopped", spawnWith });
		return readRow(ctx, id);
	}

	const stop = async (id: string): Promise<BoardRow> => (await stopOutcome(id)).row;

	return {
		reply,
		stop,
		stopOutcome,
		pendingMessages: (runDir: string) => (existsSync(runDir) ? inboxNames(runDir).length : 0),
	};
}
