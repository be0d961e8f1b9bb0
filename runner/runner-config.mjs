// The runner's start: its run.json, checked before anything runs (a wrong one fails the run where it
// is and frees its slot), and the worker's command line built from it.
import { basename, dirname, resolve } from "node:path";
import { PROMPT_PLACEHOLDER } from "./protocol.mjs";
import { recordStartFailure } from "./life/run-end.mjs";
import { readRunConfig } from "./life/run-config.mjs";
import { releaseSlot } from "./life/slots.mjs";
import { isValidId, runPathsOf } from "./store/store-layout.mjs";

/**
 * A run.json of the wrong shape is refused: its run is recorded failed with the path and the field
 * (in the directory the file is in, the one place it can name truthfully), its slot freed.
 * @param {string} path @param {string} slot
 */
export function readConfig(path, slot) {
	const dir = dirname(resolve(path));
	try {
		const read = readRunConfig(path);
		// Every path the run writes is derived from the ids: a run.json naming others is refused.
		if (!isValidId(read.rowId) || !isValidId(read.runId)) throw new Error(`${path}: /rowId and /runId must be ids`);
		const where = runPathsOf(read.layout ?? "store", resolve(read.storeDir), read.rowId, read.runId);
		if (resolve(read.runDir) !== dir || where.runDir !== dir)
			throw new Error(`${path}: /runDir is not the directory of run.json in its store`);
		if (resolve(read.sessionFile) !== where.sessionFile)
			throw new Error(`${path}: /sessionFile is not the row's session file in its store`);
		return read;
	} catch (error) {
		const reason = error instanceof Error ? error.message : String(error);
		try {
			process.stderr.write(`agent-board runner: ${reason}\n`);
		} catch {
			// runner.log is on the store's disk; the status below says it.
		}
		recordStartFailure(dir, reason);
		releaseSlot(slot, basename(dir));
		process.exit(1);
	}
}

/**
 * The worker's argv: `pi --mode json -p --session <file>`, and a placeholder where the prompt would be.
 * @param {import("./life/run-config.mjs").RunConfig} config
 */
export function workerArgs(config) {
	const args = [...config.piCommand.slice(1), "--mode", "json", "-p", "--session", config.sessionFile];
	if (config.model) args.push("--model", config.model);
	if (config.thinking) args.push("--thinking", config.thinking);
	if (config.extensionPath) args.push("-e", config.extensionPath);
	// The prompt itself travels over fd 3: argv is readable by every local user, and pi reads "@" as a file.
	args.push("--", PROMPT_PLACEHOLDER);
	return args;
}
