/** Reads the facts the opt-in rule needs from a working directory; never throws. */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ProjectFacts } from "./opt-in.ts";

function readText(path: string): string | undefined {
	try {
		return readFileSync(path, "utf8");
	} catch {
		return undefined;
	}
}

function isDirectory(path: string): boolean {
	try {
		return statSync(path).isDirectory();
	} catch {
		return false;
	}
}

function exists(path: string): boolean {
	try {
		statSync(path);
		return true;
	} catch {
		return false;
	}
}

export function probeProject(cwd: string): ProjectFacts {
	return {
		agentsMd: readText(join(cwd, "AGENTS.md")),
		claudeMd: readText(join(cwd, "CLAUDE.md")),
		hasTasksDir: isDirectory(join(cwd, ".tasks")),
		// A linked worktree or submodule has a .git file rather than a directory.
		hasGit: exists(join(cwd, ".git")),
	};
}
