/**
 * The installed pi package and everything it needs at run time, read from this repository's
 * package-lock.json: what an `npm install -g` of pi would put on a machine. Used to build the offline
 * worker image and to give a test host user a pi it can read.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./pi-harness.ts";

export const PI_PACKAGE = "@earendil-works/pi-coding-agent";
/** The CLI entry inside the pi package (its package.json "bin"). */
export const PI_BIN = "dist/bundle/cli.js";

interface LockEntry {
	dependencies?: Record<string, string>;
	optionalDependencies?: Record<string, string>;
}

/** Lock paths ("node_modules/a", "node_modules/a/node_modules/b") of pi and its runtime dependencies. */
export function piClosure(repo = REPO_ROOT): string[] {
	const lock = JSON.parse(readFileSync(join(repo, "package-lock.json"), "utf8")) as {
		packages: Record<string, LockEntry>;
	};
	const packages = lock.packages;
	const seen = new Set<string>();
	// Node's resolution over lock paths: the nearest node_modules up the nesting wins.
	const resolve = (from: string, name: string): string | undefined => {
		let base = from;
		for (;;) {
			const candidate = `${base ? `${base}/` : ""}node_modules/${name}`;
			if (packages[candidate]) return candidate;
			if (!base) return undefined;
			const cut = base.lastIndexOf("/node_modules/");
			base = cut < 0 ? "" : base.slice(0, cut);
		}
	};
	const walk = (path: string): void => {
		if (seen.has(path)) return;
		seen.add(path);
		const entry = packages[path] ?? {};
		for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) {
			const found = resolve(path, name);
			if (found) walk(found);
		}
	};
	walk(`node_modules/${PI_PACKAGE}`);
	return [...seen].sort();
}
