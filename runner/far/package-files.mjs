// What of this package a far side needs (runner/, src/, skills/, package.json: the runner, the worker's
// extension, its skills) and its version there: the package version plus a hash of exactly those
// files, so an edited checkout is a new version and two boards of different versions share a host.
// An ssh host gets them copied (kinds/ssh/pkg-install.mjs), a container mounts them.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { writeJsonAtomic } from "../store/fs-util.mjs";

/** This package's root (at a target: <dir>/pkg/<version>/ over ssh, /ab/pkg in a container). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export const SHIPPED = ["package.json", "runner", "src", "skills"];

/** Regular files to ship, relative to the package root, sorted. @param {string} [root] */
export function shippedFiles(root = PACKAGE_ROOT) {
	/** @type {string[]} */
	const files = [];
	/** @param {string} path */
	const walk = (path) => {
		const stat = statSync(path);
		if (stat.isDirectory()) {
			for (const name of readdirSync(path).sort())
				if (!name.startsWith(".") && name !== "node_modules") walk(join(path, name));
		} else if (stat.isFile()) files.push(relative(root, path));
	};
	for (const top of SHIPPED) walk(join(root, top));
	return files.sort();
}

/**
 * packageVersion, remembered in `cacheFile` (in the private store) under a fingerprint of the shipped
 * files' sizes, mtimes and modes: a link starts per run, and hashing every file costs ~100 ms there.
 * @param {string} cacheFile @param {string} [root]
 */
export function cachedPackageVersion(cacheFile, root = PACKAGE_ROOT) {
	const print = createHash("sha256").update(root);
	for (const file of shippedFiles(root)) {
		const stat = statSync(join(root, file));
		print.update(`${file}\0${stat.size}\0${stat.mtimeMs}\0${stat.mode}\0`);
	}
	const fingerprint = print.digest("hex");
	try {
		const cached = JSON.parse(readFileSync(cacheFile, "utf8"));
		if (cached?.fingerprint === fingerprint && typeof cached.version === "string") return cached.version;
	} catch {
		// Not cached yet.
	}
	const version = packageVersion(root);
	try {
		writeJsonAtomic(cacheFile, { fingerprint, version });
	} catch {
		// Computed again next time.
	}
	return version;
}

/** `<package version>-<12 hex of the shipped files>`. @param {string} [root] */
export function packageVersion(root = PACKAGE_ROOT) {
	const hash = createHash("sha256");
	for (const file of shippedFiles(root)) {
		const bytes = readFileSync(join(root, file));
		hash.update(`${file}\0${statSync(join(root, file)).mode & 0o111 ? "x" : "-"}\0${bytes.length}\0`);
		hash.update(bytes);
	}
	const version = String(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version);
	return `${version}-${hash.digest("hex").slice(0, 12)}`;
}
