// What the web server needs from pi to load the board's TypeScript: jiti (pi's extension loader) and
// pi's own packages, resolved from the pi that started it, as pi resolves them for an extension. An
// installed package (pi install) has no @earendil-works packages beside it, and Node's own type
// stripping refuses files under node_modules, so neither a bare import nor `node file.ts` would do.
// Plain node: imports only node:*.
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export const PI_PACKAGE = "@earendil-works/pi-coding-agent";

/** What pi hands every extension (its docs: "Pi supplies these packages"), by specifier. */
export const HOST_SPECIFIERS = [
	"@earendil-works/pi-tui",
	"@earendil-works/pi-ai",
	"@earendil-works/pi-agent-core",
	"typebox",
	"typebox/compile",
	"typebox/value",
];

/** @param {string} path @returns {{ name?: string } | undefined} */
function readPackage(path) {
	try {
		return JSON.parse(readFileSync(path, "utf8"));
	} catch {
		return undefined;
	}
}

/**
 * pi's package directory from the script pi runs (`.../pi-coding-agent/dist/bundle/cli.js`, maybe
 * through a bin symlink), or undefined.
 * @param {string | undefined} script
 */
export function piRootFromScript(script) {
	if (!script) return undefined;
	let dir;
	try {
		dir = dirname(realpathSync(script));
	} catch {
		return undefined;
	}
	for (; dirname(dir) !== dir; dir = dirname(dir)) {
		if (readPackage(join(dir, "package.json"))?.name === PI_PACKAGE) return dir;
	}
	return undefined;
}

/**
 * The directory of package `name` as Node would find it from `from` (node_modules upwards), or undefined.
 * @param {string} from @param {string} name
 */
export function packageDir(from, name) {
	for (let dir = from; ; dir = dirname(dir)) {
		const candidate = join(dir, "node_modules", name);
		if (existsSync(join(candidate, "package.json"))) return candidate;
		if (dirname(dir) === dir) return undefined;
	}
}

/** @param {unknown} target @returns {string | undefined} */
function pickImport(target) {
	if (typeof target === "string") return target;
	if (!target || typeof target !== "object") return undefined;
	for (const condition of ["import", "node", "default"]) {
		if (condition in target) {
			const found = pickImport(/** @type {Record<string, unknown>} */ (target)[condition]);
			if (found) return found;
		}
	}
	return undefined;
}

/**
 * The file of package directory `dir` that an ESM import of its subpath `sub` ("." or "./compile")
 * loads: "exports" ("import", then "node", then "default" conditions), else its module/main field.
 * @param {string} dir @param {string} sub
 */
export function exportedFile(dir, sub) {
	const pkg = /** @type {{ name?: string, exports?: unknown, module?: string, main?: string }} */ (
		readPackage(join(dir, "package.json")) ?? {}
	);
	let rel;
	if (pkg.exports !== undefined) {
		const map = /** @type {Record<string, unknown>} */ (pkg.exports);
		const conditional = typeof pkg.exports === "string" || !Object.keys(map).some((key) => key.startsWith("."));
		rel = pickImport(conditional ? (sub === "." ? pkg.exports : undefined) : map[sub]);
	} else rel = sub === "." ? (pkg.module ?? pkg.main ?? "index.js") : sub;
	if (!rel) throw new Error(`${pkg.name ?? dir} exports no ${sub}`);
	return join(dir, rel);
}

/**
 * The file an ESM `import specifier` would load from directory `from`. Throws naming what is missing.
 * @param {string} from @param {string} specifier
 */
export function resolveImport(from, specifier) {
	const parts = specifier.split("/");
	const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
	const dir = packageDir(from, name);
	if (!dir) throw new Error(`cannot find ${name} from ${from}`);
	return exportedFile(dir, `.${specifier.slice(name.length)}`);
}

/**
 * jiti and the aliases that map pi's packages to pi's own copies: the pi that started the server
 * first (`piRoot`), then the package's own node_modules (a checkout with its dev dependencies).
 * @param {string | undefined} piRoot @param {string} ownRoot
 * @returns {{ createJiti: (id: string, options: Record<string, unknown>) => { import: (id: string) => Promise<unknown> }, alias: Record<string, string>, from: string }}
 */
export function piModules(piRoot, ownRoot) {
	const roots = [piRoot, packageDir(ownRoot, PI_PACKAGE)].filter(
		(root) => typeof root === "string" && existsSync(join(root, "package.json")),
	);
	const problems = [];
	for (const root of /** @type {string[]} */ (roots)) {
		try {
			const { createJiti } = createRequire(join(root, "package.json"))("jiti");
			const bundle = join(root, "dist", "bundle", "index.js");
			/** @type {Record<string, string>} */
			const alias = { [PI_PACKAGE]: existsSync(bundle) ? bundle : exportedFile(root, ".") };
			for (const specifier of HOST_SPECIFIERS) alias[specifier] = resolveImport(root, specifier);
			return { createJiti, alias, from: root };
		} catch (error) {
			problems.push(`${root}: ${error instanceof Error ? error.message : String(error)}`);
		}
	}
	throw new Error(
		`cannot load the board engine: no pi install with jiti and pi's packages found (${problems.join("; ") || "no pi package directory known"}); run pi from an npm install of ${PI_PACKAGE}`,
	);
}
