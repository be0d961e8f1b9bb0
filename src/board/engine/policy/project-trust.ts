/**
 * Whether a row's project is trusted, as pi decides it for a run without a prompt (print and JSON
 * mode): a saved decision for the directory or its nearest parent (`/trust`, ~/.pi/agent/trust.json),
 * else the global `defaultProjectTrust` ("always" trusts). A project's rules and presets are read only
 * then, as pi reads a project's settings only then.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { CONFIG_DIR_NAME, ProjectTrustStore } from "@earendil-works/pi-coding-agent";

export function projectTrusted(dir: string, agentDir: string): boolean {
	try {
		const saved = new ProjectTrustStore(agentDir).get(dir);
		if (saved !== null) return saved;
	} catch {
		// An unreadable trust store trusts nothing.
		return false;
	}
	try {
		const settings = JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8")) as {
			defaultProjectTrust?: unknown;
		};
		return settings.defaultProjectTrust === "always";
	} catch {
		return false;
	}
}

/**
 * The nearest `<dir>/.pi/<relative>` from `cwd` upwards (the home directory's own `.pi` is the user's
 * config, not a project), or undefined.
 */
export function nearestProjectPath(cwd: string, relative: string): { root: string; path: string } | undefined {
	const home = resolve(homedir());
	for (let dir = resolve(cwd); ; dir = dirname(dir)) {
		if (dir === home) return undefined;
		const path = join(dir, CONFIG_DIR_NAME, relative);
		if (existsSync(path)) return { root: dir, path };
		if (dirname(dir) === dir) return undefined;
	}
}

/** The trusted project's `.pi/<relative>` that applies to `cwd`, or undefined. */
export function trustedProjectPath(cwd: string, relative: string, agentDir: string): string | undefined {
	const found = nearestProjectPath(cwd, relative);
	return found && projectTrusted(found.root, agentDir) ? found.path : undefined;
}

export function isDirectory(path: string): boolean {
	try {
		return statSync(path).isDirectory();
	} catch {
		return false;
	}
}
