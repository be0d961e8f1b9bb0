/** Which pi the workers run and which node runs the runner: the pi that runs the extension, unless overridden. */
import { basename, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
/** Every worker loads this extension: its worker role is the other end of the control channel. */
export const EXTENSION_PATH = resolve(HERE, "../../index.ts");

/**
 * The pi that runs the extension also runs the workers; AGENT_BOARD_PI (a path, or a JSON array
 * of argv words) overrides it.
 */
export function resolvePiCommand(env: NodeJS.ProcessEnv = process.env): string[] {
	const override = env.AGENT_BOARD_PI;
	if (override) {
		if (override.trim().startsWith("[")) {
			const parsed = JSON.parse(override) as unknown;
			if (Array.isArray(parsed) && parsed.length > 0 && parsed.every((w) => typeof w === "string"))
				return parsed as string[];
			throw new Error("AGENT_BOARD_PI: expected a path or a JSON array of strings");
		}
		return [override];
	}
	// A compiled pi binary is its own executable; under node, pi is the script node runs.
	if (!isNode(process.execPath)) return [process.execPath];
	const script = process.argv[1];
	if (script && (/pi-coding-agent/.test(script) || ["pi", "cli.js", "cli.mjs"].includes(basename(script))))
		return [process.execPath, script];
	return ["pi"];
}

function isNode(path: string): boolean {
	return /^node(\d+)?(\.exe)?$/.test(basename(path));
}

/** The runner is plain node; inside a compiled pi binary use node from PATH (or AGENT_BOARD_NODE). */
export function nodeCommand(env: NodeJS.ProcessEnv = process.env): string {
	if (env.AGENT_BOARD_NODE) return env.AGENT_BOARD_NODE;
	return isNode(process.execPath) ? process.execPath : "node";
}
