/**
 * Last dispatch choices, remembered in a small JSON file next to the store so the next dispatch
 * form starts where the user left off. Written via temp+rename.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ThinkingLevel, WorktreeMode } from "../types.ts";
import type { BoardSettings } from "./notify.ts";

export interface DispatchPrefs {
	cwd?: string;
	model?: string;
	thinking?: ThinkingLevel;
	worktreeMode?: WorktreeMode;
	/** Board settings saved from the settings view (strip, notices, OS notifications). */
	board?: Partial<BoardSettings>;
}

export const PREFS_FILE = "dashboard-prefs.json";

export async function loadPrefs(storeDir: string): Promise<DispatchPrefs> {
	try {
		const parsed: unknown = JSON.parse(await readFile(join(storeDir, PREFS_FILE), "utf8"));
		return typeof parsed === "object" && parsed !== null ? (parsed as DispatchPrefs) : {};
	} catch {
		return {};
	}
}

export async function savePrefs(storeDir: string, prefs: DispatchPrefs): Promise<void> {
	await mkdir(storeDir, { recursive: true });
	const file = join(storeDir, PREFS_FILE);
	const tmp = `${file}.${process.pid}.tmp`;
	await writeFile(tmp, `${JSON.stringify(prefs, null, 2)}\n`);
	await rename(tmp, file);
}
