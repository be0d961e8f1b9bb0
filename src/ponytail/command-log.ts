/** Bounded JSONL log of /ponytail* commands (never prompts) under the XDG cache dir. */
import { appendFileSync, mkdirSync, readFileSync, renameSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const LOG_ROTATE_BYTES = 1024 * 1024;

export interface CommandLogEntry {
	command: string;
	args: string;
	timestamp: string;
}

export function commandLogFile(env: NodeJS.ProcessEnv): string | undefined {
	if (env.PONYTAIL_COMMAND_LOG === "0") return undefined;
	const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
	return join(base, "ponytail", "commands.log");
}

/** Appends one line; rotates to commands.log.1 first when the file has reached the limit. */
export function appendCommandLog(file: string, entry: CommandLogEntry, limit = LOG_ROTATE_BYTES): void {
	mkdirSync(join(file, ".."), { recursive: true });
	try {
		if (statSync(file).size >= limit) renameSync(file, `${file}.1`);
	} catch {
		// No log yet: nothing to rotate.
	}
	appendFileSync(file, `${JSON.stringify(entry)}\n`);
}

/** The last `count` entries, oldest first; malformed lines are skipped. */
export function readCommandLog(file: string, count: number): CommandLogEntry[] {
	let text: string;
	try {
		text = readFileSync(file, "utf8");
	} catch {
		return [];
	}
	const entries: CommandLogEntry[] = [];
	for (const line of text.split("\n")) {
		if (!line.trim()) continue;
		try {
			const value = JSON.parse(line) as Partial<CommandLogEntry>;
			if (typeof value.command === "string" && typeof value.timestamp === "string") {
				entries.push({
					command: value.command,
					args: typeof value.args === "string" ? value.args : "",
					timestamp: value.timestamp,
				});
			}
		} catch {
			// A torn line from a crash is not worth failing the listing.
		}
	}
	return entries.slice(-count);
}

export function formatCommandLog(entries: CommandLogEntry[]): string {
	if (entries.length === 0) return "ponytail: command log is empty";
	return entries.map((e) => `${e.timestamp} /${e.command}${e.args ? ` ${e.args}` : ""}`).join("\n");
}
