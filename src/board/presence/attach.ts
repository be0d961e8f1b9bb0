/**
 * Attach and come back: before `o` switches pi to a row's session, the session we came from is
 * recorded (per pi process, in the store, 0600) so `b` in the board or `/agent-board back` can switch
 * back to it. The record survives pi's session switch, which reloads this extension; while it holds,
 * pi's footer says which row this is and how to go back.
 */
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { ensureDir, writeFileAtomic } from "../../../runner/store/fs-util.mjs";
import type { ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { BoardRow, BoardService } from "../engine/types.ts";
import { clean } from "../view-model/row-text.ts";
import { attachSessionFor } from "./attach-session.ts";

export const ATTACH_STATUS_KEY = "agent-board-attached";

export interface AttachRecord {
	rowId: string;
	rowName: string;
	/** Session file of the row we attached to. */
	sessionFile: string;
	/** Session file to return to. */
	from: string;
	at: number;
}

function recordPath(storeDir: string, pid: number): string {
	return join(storeDir, "attach", `${pid}.json`);
}

export async function loadAttach(storeDir: string, pid = process.pid): Promise<AttachRecord | undefined> {
	try {
		const parsed: unknown = JSON.parse(await readFile(recordPath(storeDir, pid), "utf8"));
		if (typeof parsed !== "object" || parsed === null) return undefined;
		const r = parsed as Partial<AttachRecord>;
		if (typeof r.rowId !== "string" || typeof r.from !== "string" || typeof r.sessionFile !== "string")
			return undefined;
		return {
			rowId: r.rowId,
			rowName: typeof r.rowName === "string" ? r.rowName : r.rowId,
			sessionFile: r.sessionFile,
			from: r.from,
			at: typeof r.at === "number" ? r.at : 0,
		};
	} catch {
		return undefined;
	}
}

export async function saveAttach(storeDir: string, record: AttachRecord, pid = process.pid): Promise<void> {
	ensureDir(join(storeDir, "attach"));
	writeFileAtomic(recordPath(storeDir, pid), `${JSON.stringify(record)}\n`);
}

export async function clearAttach(storeDir: string, pid = process.pid): Promise<void> {
	await rm(recordPath(storeDir, pid), { force: true });
}

/** The footer's line while attached: which row, and the way back. */
export function attachedStatus(record: AttachRecord): string {
	return `attached to ${clean(record.rowName)} · /agent-board back returns`;
}

/** Switches this pi to the row's session (it is not running), remembering where we came from. */
export async function attachTo(
	ctx: ExtensionCommandContext,
	service: BoardService,
	row: BoardRow,
	attached: AttachRecord | undefined,
): Promise<void> {
	// Only plain data crosses the switch: the old ctx is stale once the new session starts.
	const { id, name } = row;
	let sessionFile: string;
	try {
		// A row that ran elsewhere opens a local copy whose cwd is its local worktree, or is refused.
		sessionFile = attachSessionFor(service.storeDir, row);
	} catch (error) {
		notify(ctx, `agent-board: ${error instanceof Error ? error.message : String(error)}`, "error");
		return;
	}
	const from = attached?.from ?? ctx.sessionManager.getSessionFile();
	await service.markViewed(id).catch(() => undefined);
	if (from) await saveAttach(service.storeDir, { rowId: id, rowName: name, sessionFile, from, at: Date.now() });
	const switched = await ctx.switchSession(sessionFile, {
		withSession: async (newCtx) => {
			newCtx.ui.notify(`Attached to board row ${clean(name)}. /agent-board back returns to your session.`, "info");
		},
	});
	if (switched.cancelled) {
		await clearAttach(service.storeDir);
		ctx.ui.notify(`Attach to ${clean(name)} was cancelled`, "warning");
	}
}

/** Switches back to the session we attached from, with its history. */
export async function goBack(
	ctx: ExtensionCommandContext,
	service: BoardService,
	attached: AttachRecord | undefined,
): Promise<void> {
	const record = attached ?? (await loadAttach(service.storeDir));
	if (!record) {
		notify(ctx, "agent-board: not attached to a board row; nothing to go back to", "error");
		return;
	}
	await service.markViewed(record.rowId).catch(() => undefined);
	const switched = await ctx.switchSession(record.from, {
		withSession: async (newCtx) => {
			newCtx.ui.notify(`Back from board row ${clean(record.rowName)}`, "info");
		},
	});
	if (!switched.cancelled) await clearAttach(service.storeDir);
}

function notify(ctx: ExtensionContext, text: string, type: "info" | "error"): void {
	if (ctx.hasUI) ctx.ui.notify(text, type);
	else process.stderr.write(`${text}\n`);
}
