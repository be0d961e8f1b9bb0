// The start cache of a container target: what a fresh container would otherwise compile on every start
// (jiti's compiled copy of our extension, node's compile cache for pi), prepared once per (image,
// package version) by a one-shot container that loads pi with our extension, and kept on this machine
// under <store>/targets/.cache/<key>/ (cacheRoot: one per store, so container targets of one image
// share it; no target name starts with a dot). Runs mount it read-only (container-argv.mjs); without
// it the first model request of a container run comes ~1.3 s later on a quiet machine, far more under
// load.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { containerOneShotArgs, engineGlobalArgs, IN } from "./container-argv.mjs";
import { engineRun } from "./container-engine.mjs";
import { ensureDir } from "../../store/fs-util.mjs";
import { isAlive, processStartTime } from "../../store/proc.mjs";

const OUT_IN = "/ab/cache-out";
const COMPLETE = ".complete";
/** Other keys' caches are removed once this old (a run started a moment ago may still read one). */
const STALE_MS = 24 * 60 * 60 * 1000;

/**
 * @typedef {object} CacheTarget
 * @property {"docker" | "podman"} engine
 * @property {string} [engineHost]
 * @property {string} image
 * @property {string} cacheRoot   where the caches live on this machine (cacheRoot(storeDir))
 * @property {string} storeDir    labels the warm-up container (reconcile finds it)
 * @property {string} pkg         package root on this machine
 * @property {string} pkgVersion  package version + hash of the shipped files (pkg-install.mjs)
 * @property {number} uid
 * @property {number} gid
 */

/** The image's id: a rebuilt image under the same tag is a new cache. @param {CacheTarget} target */
export async function imageId(target) {
	const { stdout } = await engineRun(
		target.engine,
		[...engineGlobalArgs(target.engine, target.engineHost), "image", "inspect", "--format", "{{.Id}}", target.image],
		{ image: target.image, timeoutMs: 30_000 },
	);
	const id = stdout.trim().split("\n")[0] ?? "";
	if (!/^(sha256:)?[0-9a-f]{12,}$/.test(id))
		throw new Error(
			`${target.engine} image inspect ${target.image}: unexpected id ${JSON.stringify(id.slice(0, 80))}`,
		);
	return id;
}

/**
 * The cache's name: image name and package version. The image's id is recorded inside and checked
 * after each start (ensureStartCache), not before it: a start must not wait for an inspect, and a
 * stale entry is only slower (jiti and node check each file's source hash).
 * @param {string} image @param {string} pkgVersion
 */
export const cacheKey = (image, pkgVersion) =>
	createHash("sha256").update(`${image}\0${pkgVersion}`).digest("hex").slice(0, 16);

/** @param {string} storeDir */
export const cacheRoot = (storeDir) => join(storeDir, "targets", ".cache");

/** @param {string} root @param {string} key */
export const cachePath = (root, key) => join(root, key);

/**
 * The prepared cache for this image and package, if any, and the image id it was made from.
 * @param {Pick<CacheTarget, "cacheRoot" | "image" | "pkgVersion">} target
 * @returns {{ dir: string, imageId: string } | undefined}
 */
export function readyCache(target) {
	const dir = cachePath(target.cacheRoot, cacheKey(target.image, target.pkgVersion));
	try {
		const [id = ""] = readFileSync(join(dir, COMPLETE), "utf8").split("\n");
		return { dir, imageId: id };
	} catch {
		return undefined;
	}
}

/**
 * Prepares the cache unless it is there for the image's current id: a one-shot container (no
 * network, same hardening) runs pi with our extension once, with its TMPDIR (jiti) and
 * NODE_COMPILE_CACHE in a fresh dir of ours; the dir becomes the cache by rename, so a reader never
 * sees half of one and two preparers cannot clash.
 * @param {CacheTarget} target
 * @returns {Promise<{ dir: string, prepared: boolean, ms: number }>}
 */
export async function ensureStartCache(target) {
	const started = Date.now();
	const id = await imageId(target);
	const ready = readyCache(target);
	if (ready && ready.imageId === id) return { dir: ready.dir, prepared: false, ms: Date.now() - started };
	const root = target.cacheRoot;
	const dir = cachePath(root, cacheKey(target.image, target.pkgVersion));
	ensureDir(root);
	// One preparer per cache: a second start meanwhile runs with what is there.
	const unlock = tryLock(`${dir}.lock`);
	if (!unlock) return { dir: ready?.dir ?? "", prepared: false, ms: Date.now() - started };
	// Looked at again holding the lock: a preparer that finished since the first look left it ready.
	const readyNow = readyCache(target);
	if (readyNow && readyNow.imageId === id) {
		unlock();
		return { dir: readyNow.dir, prepared: false, ms: Date.now() - started };
	}
	const temp = join(root, `.prep-${randomBytes(6).toString("hex")}`);
	ensureDir(join(temp, "jiti"));
	ensureDir(join(temp, "node"));
	try {
		const args = containerOneShotArgs(target, {
			purpose: "cache",
			volumes: [[temp, OUT_IN]],
			env: [
				`TMPDIR=${OUT_IN}`,
				`NODE_COMPILE_CACHE=${OUT_IN}/node`,
				`PI_CODING_AGENT_DIR=${IN.home}/pi`,
				"PI_OFFLINE=1",
				"PI_SKIP_VERSION_CHECK=1",
				"PI_TELEMETRY=0",
			],
			// No model is configured: pi loads its extensions, then stops at "no API key". A fixed word,
			// not a user's prompt.
			command: ["pi", "--mode", "json", "-p", "--no-session", "-e", `${IN.src}/index.ts`, "warm"],
		});
		// pi exits non-zero without a model; what matters is what it compiled.
		await engineRun(target.engine, args, { image: target.image, timeoutMs: 180_000 }).catch((error) => {
			if (error?.code !== "engine-failed") throw error;
		});
		if (readdirSync(join(temp, "jiti")).length === 0)
			throw new Error(
				`preparing the start cache: pi in ${target.image} compiled nothing (is our extension loadable there?)`,
			);
		writeFileSync(join(temp, COMPLETE), `${id}\n${target.pkgVersion}\n`);
		// An older cache under the same name (the image was rebuilt) steps aside first; a run that
		// mounted it keeps what it already read.
		if (existsSync(dir)) renameSync(dir, join(root, `.old-${randomBytes(6).toString("hex")}`));
		try {
			renameSync(temp, dir);
		} catch (error) {
			// Another start prepared it first: theirs is as good as ours.
			if (!existsSync(join(dir, COMPLETE))) throw error;
		}
		pruneCaches(root, basename(dir));
		return { dir, prepared: true, ms: Date.now() - started };
	} finally {
		rmSync(temp, { recursive: true, force: true });
		unlock();
	}
}

/** @param {string} path @returns {(() => void) | undefined} */
function tryLock(path) {
	const mine = `${process.pid} ${processStartTime(process.pid)}`;
	for (let attempt = 0; attempt < 2; attempt++) {
		try {
			writeFileSync(path, mine, { flag: "wx", mode: 0o600 });
			return () => rmSync(path, { force: true });
		} catch {
			const [pid, start] = (() => {
				try {
					return readFileSync(path, "utf8").split(" ");
				} catch {
					return [];
				}
			})();
			if (isAlive(Number(pid), start)) return undefined;
			rmSync(path, { force: true });
		}
	}
	return undefined;
}

/** Removes other keys' caches (and abandoned preparations) a day old. @param {string} root @param {string} keep */
function pruneCaches(root, keep) {
	for (const name of readdirSync(root)) {
		if (name === keep || name.endsWith(".lock")) continue;
		// Old caches under a rebuilt image's name go at once; other names after a day.
		const age = name.startsWith(".old-") ? Infinity : undefined;
		const path = join(root, name);
		try {
			if ((age ?? Date.now() - statSync(path).mtimeMs) > STALE_MS) rmSync(path, { recursive: true, force: true });
		} catch {
			// Removed by someone else meanwhile.
		}
	}
}
