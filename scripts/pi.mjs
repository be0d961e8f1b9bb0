#!/usr/bin/env node
// `npm run --prefix <checkout> pi`: the pi in node_modules with this package loaded, on a fresh clone with
// no pi installed, working in the directory you ran it from. npm runs a script in the package's own
// directory; INIT_CWD is where you were, so the first agent works on your project, not on this
// checkout. pi needs Node >= 22.19; on an older Node this re-runs itself under the Node 22 that
// `npm test` and `npm run demo` use (fetched once into a cache by node22.mjs).
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ensureNode22 } from "./node22.mjs";

const args = process.argv.slice(2);
ensureNode22(fileURLToPath(import.meta.url), args);

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(repo, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");
const entry = join(repo, "src/index.ts");

/** The arguments without `-e <this package>` (the README's older `-e ./src/index.ts` included): it is loaded once, here. */
function withoutOwnExtension(list) {
	const out = [];
	for (let i = 0; i < list.length; i++) {
		const flag = list[i];
		const value = list[i + 1];
		if (
			(flag === "-e" || flag === "--extension") &&
			value !== undefined &&
			[resolve(repo, value), resolve(value)].includes(entry)
		)
			i += 1;
		else out.push(flag);
	}
	return out;
}

const caller = process.env.INIT_CWD;
if (caller && existsSync(caller)) process.chdir(caller);
// pi reads its arguments from process.argv, and the board starts its workers with the same node and script.
process.argv = [process.execPath, cli, "-e", entry, ...withoutOwnExtension(args)];
await import(pathToFileURL(cli).href);
