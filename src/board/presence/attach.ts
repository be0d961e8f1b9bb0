/**
 * Attach and come back: before `o` switches pi to a row's session, the session we came from is
 * recorded (per pi process, in the store, 0600) so `b` in the board or `/agent-board back` can switch
 * back to it, and the board can mark the attached row. The record survives pi's session switch, which
 * reloads this extension.
 */
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

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
		if (typeof r.rowId !== "string" || typeof r.from !== "string" || typeof r.sessionFile !== "string") return undefined;
		return { rowId: r.rowId, rowName: typeof r.rowName === "string" ? r.rowName : r.rowId, sessionFile: r.sessionFile, from: r.from, at: typeof r.at === "number" ? r.at : 0 };
	} catch {
		return undefined;
	}
}

export async function saveAttach(storeDir: string, record: AttachRecord, pid = process.pid): Promise<void> {
	const file = recordPath(storeDir, pid);
	await mkdir(join(storeDir, "attach"), { recursive: true, mode: 0o700 });
	const tmp = `${file}.tmp`;
	await writeFile(tmp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
	await rename(tmp, file);
}

export async function clearAttach(storeDir: string, pid = process.pid): Promise<void> {
	await rm(recordPath(storeDir, pid), { force: true });
}
