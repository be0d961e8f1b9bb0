/** The handoff notes on disk, so the ritual can tell whether its turn wrote one. */
import { readdirSync } from "node:fs";
import { join } from "node:path";

export const HANDOFF_DIR = ".tasks/handoffs";

/** Markdown files in `.tasks/handoffs/`; empty when the directory is missing. Never throws. @param {string} cwd @returns {string[]} */
export function listNotes(cwd) {
	try {
		return readdirSync(join(cwd, HANDOFF_DIR)).filter((name) => name.endsWith(".md"));
	} catch {
		return [];
	}
}

/** @param {readonly string[]} before @param {readonly string[]} after */
export function newNotes(before, after) {
	const seen = new Set(before);
	return after.filter((name) => !seen.has(name)).sort();
}
