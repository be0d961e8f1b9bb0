// Runs every benchmark in this folder in turn; each prints its own numbers.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
for (const name of readdirSync(here).sort()) {
	// soak.mjs runs an hour with faults injected (#38): started by hand, never in a batch.
	if (!name.endsWith(".mjs") || name === "run-all.mjs" || name === "soak.mjs" || name.startsWith("_")) continue;
	console.log(`\n== ${name}`);
	// --expose-gc: memory figures are taken after a collection, as board-scale's header says.
	const result = spawnSync(process.execPath, ["--experimental-strip-types", "--expose-gc", join(here, name)], {
		stdio: "inherit",
	});
	if (result.status !== 0) process.exitCode = 1;
}
