/**
 * Which test files are end-to-end: those that start the real pi or tmux, found by what they import
 * (test-support/pi-harness.ts or tmux.ts, directly or through another test-support module), and those
 * that start any process themselves (they import node:child_process, or a test-support module that
 * does: git repos, the worker channel, the fake kind's host-agent). Every other test file is a unit
 * test, and spawns nothing: `npm run test:unit` runs those alone. Nothing to keep in sync by hand: a new
 * test is placed by its imports. requires.ts is not counted: its probes run only where a test asks.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const STARTS_PI_OR_TMUX = ["test-support/pi-harness.ts", "test-support/tmux.ts"];
/** Imported only to ask whether a prerequisite is there (a probe), not to run a test's processes. */
const PROBES_ONLY = ["test-support/requires.ts"];
const SPAWNS = /\bfrom\s+["']node:child_process["']/;

function localImports(file: string): string[] {
	const text = readFileSync(file, "utf8");
	const specifiers = [
		...text.matchAll(/\bfrom\s+["'](\.{1,2}\/[^"']+)["']|\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g),
	];
	return specifiers.map((match) => resolve(dirname(file), match[1] ?? match[2] ?? ""));
}

/** Test files (paths relative to `root`) that reach pi or tmux through their imports. */
export function endToEndTests(root: string): string[] {
	const targets = new Set(STARTS_PI_OR_TMUX.map((path) => resolve(root, path)));
	const memo = new Map<string, boolean>();
	const reaches = (file: string): boolean => {
		if (targets.has(file)) return true;
		const known = memo.get(file);
		if (known !== undefined) return known;
		if (!PROBES_ONLY.some((path) => resolve(root, path) === file) && SPAWNS.test(readFileSync(file, "utf8"))) {
			memo.set(file, true);
			return true;
		}
		memo.set(file, false);
		// Only our own test code is followed: src/ and runner/ never start pi for a test.
		const followed = localImports(file).filter(
			(path) => relative(root, path).startsWith("test-support/") || targets.has(path),
		);
		const result = followed.some(reaches);
		memo.set(file, result);
		return result;
	};
	return readdirSync(join(root, "tests"))
		.filter((name) => name.endsWith(".test.ts"))
		.map((name) => join(root, "tests", name))
		.filter(reaches)
		.map((path) => relative(root, path))
		.sort();
}
