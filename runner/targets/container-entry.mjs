// A container run's first process (after --init): puts the prepared start cache where pi looks for
// it, then becomes the unchanged job runner. jiti only uses a cache directory it can write to, so its
// read-only copy (container-cache.mjs) is copied into the fresh tmpfs (~0.4 MB, a few ms); node's
// compile cache is read in place (NODE_COMPILE_CACHE, set by container-argv.mjs).
// Usage (inside): node container-entry.mjs <run.json> <slot-file>
import { cpSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CACHE_IN } from "./container-argv.mjs";

const jiti = join(CACHE_IN, "jiti");
if (existsSync(jiti)) {
	try {
		cpSync(jiti, join(tmpdir(), "jiti"), { recursive: true, force: false, errorOnExist: false });
	} catch (error) {
		// A cold start is slower, never wrong.
		process.stderr.write(`start cache not copied: ${error instanceof Error ? error.message : String(error)}\n`);
	}
}
// The runner reads its arguments from process.argv, which are this file's.
await import("../job-runner.mjs");
