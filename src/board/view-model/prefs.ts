/**
 * Last dispatch choices and the board settings, remembered in a small JSON file next to the store so
 * the next dispatch starts where the user left off. Written via temp+rename, 0600 (a cwd and model
 * are private).
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { ensureDir, writeFileAtomic } from "../../../runner/store/fs-util.mjs";
import { shapeError, PrefsSchema } from "../engine/schemas.ts";
import type { ThinkingLevel, WorktreeMode } from "../engine/types.ts";

/** Settings that reach outside the board (presence/notify.ts applies them, with environment overrides). */
export interface BoardSettings {
	/** The below-editor strip of live rows. */
	strip: boolean;
	/** pi notices ("agent-board: x completed") while the board is closed. */
	notices: boolean;
	/** Terminal-level OS notifications. */
	osNotify: boolean;
}

export const DEFAULT_SETTINGS: BoardSettings = { strip: true, notices: true, osNotify: true };

export interface DispatchPrefs {
	/** The last `where`: a target's name, or "local". */
	target?: string;
	cwd?: string;
	model?: string;
	thinking?: ThinkingLevel;
	worktreeMode?: WorktreeMode;
	/** Board settings saved from the settings view (strip, notices, OS notifications). */
	board?: Partial<BoardSettings>;
}

export const PREFS_FILE = "dashboard-prefs.json";

/** Missing, unreadable, symlinked or wrongly shaped prefs are no prefs: they are only defaults for a form. */
export async function loadPrefs(storeDir: string): Promise<DispatchPrefs> {
	try {
		const handle = await open(
			join(storeDir, PREFS_FILE),
			constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
		);
		try {
			if (!(await handle.stat()).isFile()) return {};
			const parsed: unknown = JSON.parse(await handle.readFile("utf8"));
			return shapeError(PrefsSchema, parsed) ? {} : (parsed as DispatchPrefs);
		} finally {
			await handle.close();
		}
	} catch {
		return {};
	}
}

export async function savePrefs(storeDir: string, prefs: DispatchPrefs): Promise<void> {
	ensureDir(storeDir);
	writeFileAtomic(join(storeDir, PREFS_FILE), `${JSON.stringify(prefs, null, 2)}\n`);
}
