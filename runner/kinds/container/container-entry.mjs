// A container run's first process (after --init): puts the prepared start cache where pi looks for
// it, arranges the final snapshot, then becomes the unchanged job runner.
// - jiti only uses a cache directory it can write to, so its read-only copy (container-cache.mjs) is
//   copied into the fresh tmpfs (~0.4 MB, a few ms); node's compile cache is read in place
//   (NODE_COMPILE_CACHE, set by container-argv.mjs).
// - When the runner exits, the workspace's uncommitted work is snapshotted here, inside, and the
//   result left in the run dir (final-snapshot.json): the link's last fetch-back then needs no one-shot
//   container after the run (~1 s each).
// Usage (inside): node container-entry.mjs <run.json> <slot-file>
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeFileAtomic } from "../../store/fs-util.mjs";
import { CACHE_IN, FINAL_SNAPSHOT, IN } from "./container-argv.mjs";

const jiti = join(CACHE_IN, "jiti");
if (existsSync(jiti)) {
	try {
		cpSync(jiti, join(tmpdir(), "jiti"), { recursive: true, force: false, errorOnExist: false });
	} catch (error) {
		// A cold start is slower, never wrong.
		process.stderr.write(`start cache not copied: ${error instanceof Error ? error.message : String(error)}\n`);
	}
}

const configPath = process.argv[2] ?? "";
process.on("exit", () => {
	try {
		const rowId = String(JSON.parse(readFileSync(configPath, "utf8")).rowId);
		const out = execFileSync(
			process.execPath,
			[join(dirname(fileURLToPath(import.meta.url)), "container-git.mjs"), "snapshot", rowId],
			{ cwd: IN.workspace, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 60_000 },
		);
		writeFileAtomic(join(IN.run, FINAL_SNAPSHOT), out);
	} catch {
		// The link snapshots in a one-shot container instead.
	}
});
// The runner reads its arguments from process.argv, which are this file's.
await import("../../job-runner.mjs");
