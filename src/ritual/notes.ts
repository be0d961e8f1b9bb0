/** The handoff notes on disk, so the ritual can tell whether its turn wrote one. */
import { readdirSync } from "node:fs";
import { join } from "node:path";

export const HANDOFF_DIR = ".tasks/handoffs";

/** Markdown files in `.tasks/handoffs/`; empty when the directory is missing. Never throws. */
export function listNotes(cwd: string): string[] {
	try {
		return readdirSync(join(cwd, HANDOFF_DIR)).filter((name) => name.endsWith(".md"));
	} catch {
		return [];
	}
}

export function newNotes(before: readonly string[], after: readonly string[]): string[] {
	const seen = new Set(before);
	return after.filter((name) => !seen.has(name)).sort();
}
