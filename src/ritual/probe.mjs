/** Reads the facts the opt-in rule needs from a working directory; never throws. */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** @param {string} path @returns {string | undefined} */
function readText(path) {
	try {
		return readFileSync(path, "utf8");
	} catch {
		return undefined;
	}
}

/** @param {string} path */
function isDirectory(path) {
	try {
		return statSync(path).isDirectory();
	} catch {
		return false;
	}
}

/** @param {string} path */
function exists(path) {
	try {
		statSync(path);
		return true;
	} catch {
		return false;
	}
}

/** @param {string} cwd @returns {import("./opt-in.mjs").ProjectFacts} */
export function probeProject(cwd) {
	return {
		agentsMd: readText(join(cwd, "AGENTS.md")),
		claudeMd: readText(join(cwd, "CLAUDE.md")),
		hasTasksDir: isDirectory(join(cwd, ".tasks")),
		// A linked worktree or submodule has a .git file rather than a directory.
		hasGit: exists(join(cwd, ".git")),
	};
}
