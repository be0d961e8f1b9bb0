/**
 * <store>/config.json, the settings every pi process of a board shares: the local concurrency limit
 * and the targets. Read shape-checked (schemas.ts BoardConfigSchema), changed only under
 * <store>/config.lock by temp + rename, so two pi processes never lose each other's change. The queue
 * reads its limits at every pump (runner/life/board-config.mjs), so a change applies at once.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { configPath, LOCAL_TARGET, TARGET_NAME } from "../../../runner/life/board-config.mjs";
import { parseJsonStrict, writeJsonAtomic } from "../../../runner/store/fs-util.mjs";
import { withLockFile } from "../../../runner/store/row-lock.mjs";
import { BoardError } from "../engine/errors.ts";
import { BoardConfigSchema, checkShape } from "../engine/schemas.ts";
import type { BoardConfig } from "../engine/types.ts";

export const EMPTY_CONFIG: BoardConfig = { version: 1, targets: {} };

/** The board's config; missing is empty, a wrong one an error naming the path and the field. */
export function readBoardConfig(storeDir: string): BoardConfig {
	const path = configPath(storeDir);
	let text: string;
	try {
		text = readFileSync(path, "utf8");
	} catch (error) {
		if ((error as NodeJS.ErrnoException).code === "ENOENT") return structuredClone(EMPTY_CONFIG);
		throw new BoardError("invalid", `cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
	}
	try {
		return checkShape(BoardConfigSchema, parseJsonStrict(text, path), path);
	} catch (error) {
		// typebox words a key outside the name pattern as "schema is false".
		const message = (error instanceof Error ? error.message : String(error)).replace(/(\/targets\/[^/]*) schema is false$/, `$1 is not a target name (1-32 of a-z, 0-9, "-"; not ${LOCAL_TARGET})`);
		throw new BoardError("invalid", message);
	}
}

/**
 * Changes the config under its lock: re-read, change, check the result's shape, write. `change` may
 * throw (a refusal) and then nothing is written. Returns the config written.
 */
export async function updateBoardConfig(storeDir: string, change: (config: BoardConfig) => void): Promise<BoardConfig> {
	return withLockFile(join(storeDir, "config.lock"), () => {
		const config = readBoardConfig(storeDir);
		change(config);
		const path = configPath(storeDir);
		checkShape(BoardConfigSchema, config, path);
		writeJsonAtomic(path, config);
		return config;
	});
}

/** A new target's name: a path component and a filter word, not "local", not taken. */
export function checkNewTargetName(config: BoardConfig, name: unknown): string {
	if (typeof name !== "string" || !TARGET_NAME.test(name)) throw new BoardError("invalid", `target name must be 1-32 of a-z, 0-9 and "-", starting with a letter or digit (got ${JSON.stringify(name)})`);
	if (name === LOCAL_TARGET) throw new BoardError("invalid", `"${LOCAL_TARGET}" is this machine and always exists; choose another name`);
	if (config.targets[name]) throw new BoardError("invalid", `a target named ${name} exists already (remove it first, or choose another name)`);
	return name;
}
