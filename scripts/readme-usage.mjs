#!/usr/bin/env node
// `npm run readme-usage`: rewrites the README's subcommand block from src/board/subcommands/usage.ts
// (tests/commands-usage.test.ts fails while they differ).
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureNode22 } from "./node22.mjs";

ensureNode22(fileURLToPath(import.meta.url), process.argv.slice(2));
const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
// Node >= 22.18 strips types by default, so the table's TypeScript loads as is.
const { readmeBlock } = await import("../src/board/subcommands/usage.ts");
const START =
	"<!-- subcommands: generated from src/board/subcommands/usage.ts (npm run readme-usage); a test fails on drift -->";
const file = join(repo, "README.md");
const readme = readFileSync(file, "utf8");
const at = readme.indexOf(START);
if (at < 0) throw new Error(`README.md has no marker: ${START}`);
const open = readme.indexOf("```\n", at);
const close = readme.indexOf("\n```", open + 4);
writeFileSync(file, `${readme.slice(0, open + 4)}${readmeBlock()}${readme.slice(close)}`);
console.log("README.md: subcommand block written");
