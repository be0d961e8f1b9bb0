// The extension's own part of pi's start: its first load's CPU in a fresh process, loaded the way pi's
// bundled CLI loads an extension (node's compile cache on, pi's modules loaded, pi's jiti warmed by an
// empty extension, then a new jiti imports the entry and calls its factory). Each run is a new process;
// the entries take turns. Prints medians with p10-p90 and the load; asserts nothing.
// Run (Node 22): node bench/extension-load.mjs [--runs 21] [name=/path/to/entry.ts ...]
// With no entries: an empty extension, the package as pi loads it (prebuilt/start.ts) and its sources
// (src/index.ts, what `pi -e ./src/index.ts` loads); give another checkout's entry to compare.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { enableCompileCache } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { load, pct } from "./_stats.mjs";

const self = fileURLToPath(import.meta.url);
if (process.argv[2] === "--child") await child(String(process.argv[3]), String(process.argv[4]));
else parent();

/** One measured load after the empty extension's, printed as CPU milliseconds. @param {string} entry @param {string} empty */
async function child(entry, empty) {
	enableCompileCache();
	// pi's own loader and virtual modules, from its bundle (the CLI picks the static loader there).
	const chunks = join(dirname(self), "..", "node_modules/@earendil-works/pi-coding-agent/dist/bundle/chunks");
	const chunk = (/** @type {RegExp} */ pattern) => {
		const name = readdirSync(chunks).find((file) => pattern.test(file));
		if (!name) throw new Error(`extension-load: no ${pattern} in ${chunks} (pi's bundle layout changed)`);
		return pathToFileURL(join(chunks, name)).href;
	};
	const base = chunk(/^jiti-static-loader-.*\.js$/);
	const { createJiti } = await import(base);
	const { VIRTUAL_MODULES } = await import(chunk(/^virtual-modules-.*\.js$/));
	const options = { moduleCache: false, virtualModules: VIRTUAL_MODULES, tryNative: false };
	const api = new Proxy({}, { get: (_target, key) => (key === "then" ? undefined : () => undefined) });
	await (await createJiti(base, options).import(empty, { default: true }))(api);
	const before = process.cpuUsage();
	const factory = await createJiti(base, options).import(entry, { default: true });
	await factory(api);
	const used = process.cpuUsage(before);
	console.log(((used.user + used.system) / 1000).toFixed(3));
}

function parent() {
	const at = process.argv.indexOf("--runs");
	const runs = at >= 0 ? Number(process.argv[at + 1]) : 21;
	const dir = mkdtempSync(join(tmpdir(), "extension-load-"));
	const empty = join(dir, "empty.ts");
	writeFileSync(empty, "export default function emptyExtension(): void {}\n");
	const given = process.argv.slice(2).filter((arg, i, all) => arg !== "--runs" && all[i - 1] !== "--runs");
	/** @type {[string, string][]} */
	const entries =
		given.length > 0
			? given.map((arg) => [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)])
			: [
					["prebuilt", join(dirname(self), "..", "prebuilt", "start.ts")],
					["sources", join(dirname(self), "..", "src", "index.ts")],
				];
	/** @type {[string, string][]} */
	const kinds = [["empty", empty], ...entries];
	/** @type {Record<string, number[]>} */
	const cpu = Object.fromEntries(kinds.map(([name]) => [name, []]));
	const once = (/** @type {string} */ entry) =>
		Number(
			execFileSync(process.execPath, [self, "--child", entry, empty], {
				encoding: "utf8",
				stdio: ["ignore", "pipe", "inherit"],
			}),
		);
	try {
		const loadBefore = load();
		for (const [, entry] of kinds) once(entry); // jiti's file cache, as after pi's first start
		for (let i = 0; i < runs; i++) {
			for (let k = 0; k < kinds.length; k++) {
				const [name, entry] = kinds[(i + k) % kinds.length] ?? ["", ""];
				cpu[name]?.push(once(entry));
			}
		}
		const f = (/** @type {number} */ n) => n.toFixed(2);
		const line = (/** @type {number[]} */ v) =>
			`median ${f(pct(v, 50))} ms (p10 ${f(pct(v, 10))}, p90 ${f(pct(v, 90))})`;
		console.log(`extension first load, CPU, n=${runs} each, interleaved (${loadBefore} before, ${load()} after)`);
		for (const [name] of kinds) console.log(`  ${name}: ${line(cpu[name] ?? [])}`);
		const [first, ...others] = entries.map(([name]) => name);
		const a = cpu[first ?? ""] ?? [];
		for (const name of others) {
			console.log(`  ${name} - ${first} per round: ${line((cpu[name] ?? []).map((t, i) => t - (a[i] ?? t)))}`);
		}
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}
