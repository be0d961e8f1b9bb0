#!/usr/bin/env node
// `npm run pi -- -e ./src/index.ts`: the pi in node_modules with this package, on a fresh clone with no
// pi installed. pi needs Node >= 22.19; on an older Node this re-runs itself under the Node 22 that
// `npm test` and `npm run demo` use (fetched once into a cache by node22.mjs).
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ensureNode22 } from "./node22.mjs";

const args = process.argv.slice(2);
ensureNode22(fileURLToPath(import.meta.url), args);

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(repo, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");
// pi reads its arguments from process.argv, and the board starts its workers with the same node and script.
process.argv = [process.execPath, cli, ...args];
await import(pathToFileURL(cli).href);
