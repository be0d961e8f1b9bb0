// Preload (node --require) for start-up tests: logs every path pi's process opens, lists or stats
// under FS_TRACE_MATCH (a path prefix list, ":"-separated) to FS_TRACE_LOG, one line each. Builtin
// ESM bindings are synced after patching, so `import { readFileSync } from "node:fs"` sees it too.
/** @typedef {(this: unknown, ...args: unknown[]) => unknown} Fn */
const fsModule = require("node:fs");
const fs = /** @type {Record<string, Fn>} */ (/** @type {unknown} */ (fsModule));
const fsPromises = /** @type {Record<string, Fn>} */ (/** @type {unknown} */ (fsModule.promises));
const { syncBuiltinESMExports } = require("node:module");
const log = process.env.FS_TRACE_LOG;
const prefixes = (process.env.FS_TRACE_MATCH ?? "").split(":").filter(Boolean);
if (log && prefixes.length > 0) {
	const logFile = log;
	const append = fsModule.appendFileSync;
	/** @param {unknown} path */
	const nameOf = (path) => (typeof path === "string" ? path : path instanceof URL ? path.pathname : "");
	for (const name of [
		"readFileSync",
		"readdirSync",
		"lstatSync",
		"statSync",
		"openSync",
		"existsSync",
		"readFile",
		"readdir",
		"stat",
		"lstat",
		"open",
	]) {
		const original = fs[name];
		if (typeof original !== "function") continue;
		/** @type {Fn} */
		fs[name] = function traced(path, ...rest) {
			const text = nameOf(path);
			if (text && prefixes.some((prefix) => text.startsWith(prefix))) append(logFile, `${name} ${text}\n`);
			return original.call(this, path, ...rest);
		};
	}
	for (const name of ["readFile", "readdir", "stat", "lstat", "open"]) {
		const original = fsPromises[name];
		if (typeof original !== "function") continue;
		/** @type {Fn} */
		fsPromises[name] = function traced(path, ...rest) {
			const text = nameOf(path);
			if (text && prefixes.some((prefix) => text.startsWith(prefix))) append(logFile, `promises.${name} ${text}\n`);
			return original.call(this, path, ...rest);
		};
	}
	syncBuiltinESMExports();
}
