/**
 * An offline worker image for podman, built from this machine's own files (no registry can be
 * reached here): a root file system with the node running the tests, the installed pi package (its
 * package-lock closure), bash, coreutils, grep, sed, findutils and git with the shared libraries each
 * needs, imported with `podman import`. Tagged by a hash of its inputs, so it is built once per
 * machine (concurrent builders wait on a lock) and reused by every test after that.
 */
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
	chmodSync,
	closeSync,
	copyFileSync,
	existsSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readdirSync,
	readFileSync,
	readSync,
	readlinkSync,
	realpathSync,
	rmSync,
	statSync,
	symlinkSync,
	linkSync,
	writeFileSync,
	constants,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { isAlive, processStartTime } from "../runner/store/proc.mjs";
import { PI_BIN, PI_PACKAGE, piClosure } from "./pi-closure.ts";
import { REPO_ROOT } from "./pi-harness.ts";

export const IMAGE_NAME = "localhost/pab-worker";
const SYSTEM_PACKAGES = ["bash", "coreutils", "grep", "sed", "findutils", "git"];
/** git helpers that reach networks or GUIs: not needed offline, and they pull in large libraries. */
const GIT_SKIP =
	/http|imap|daemon|instaweb|svn|cvs|p4|archimport|send-email|libsecret|gui|gitk|shell|scalar|web--browse/;
const LOCK = join(tmpdir(), "pab-worker-image.lock");

export interface WorkerImage {
	tag: string;
	/** False when the image already existed. */
	built: boolean;
	buildMs: number;
}

function run(command: string, args: string[]): string {
	return execFileSync(command, args, {
		encoding: "utf8",
		stdio: ["ignore", "pipe", "pipe"],
		maxBuffer: 64 * 1024 * 1024,
	});
}

/** Every input that changes the image: this recipe, the lockfile, node, the system packages' versions. */
function contentKey(): string {
	const hash = createHash("sha256");
	hash.update(readFileSync(fileURLToPath(import.meta.url)));
	hash.update(readFileSync(join(REPO_ROOT, "package-lock.json")));
	const node = statSync(realpathSync(process.execPath));
	hash.update(`${process.version} ${node.size} ${node.mtimeMs}`);
	hash.update(run("dpkg-query", ["-W", "-f", "${Package} ${Version}\\n", ...SYSTEM_PACKAGES]));
	return hash.digest("hex").slice(0, 16);
}

/** Files of the system packages worth having in a worker (no docs, man pages or locales). */
function systemFiles(): string[] {
	const out: string[] = [];
	for (const pkg of SYSTEM_PACKAGES) {
		for (const path of run("dpkg", ["-L", pkg]).split("\n")) {
			if (!/^\/(usr\/)?(s?bin|lib\/git-core)\/[^/]+$|^\/usr\/share\/git-core\//.test(path)) continue;
			if (pkg === "git" && GIT_SKIP.test(path)) continue;
			if (existsSync(path) && !statSync(path).isDirectory()) out.push(path);
		}
	}
	return out;
}

/** Copies files into a root file system keeping symlinks (and their targets) and hard links. */
class RootFs {
	private inodes = new Map<string, string>();
	private done = new Set<string>();
	private root: string;
	constructor(root: string) {
		this.root = root;
	}

	add(path: string): void {
		if (this.done.has(path)) return;
		this.done.add(path);
		// Copy through the real parent directory: /bin is a link to usr/bin here and in the image.
		const parent = realpathSync(dirname(path));
		const real = join(parent, path.slice(path.lastIndexOf("/") + 1));
		const dest = join(this.root, real);
		mkdirSync(dirname(dest), { recursive: true });
		const stat = lstatSync(real);
		if (stat.isSymbolicLink()) {
			const target = readlinkSync(real);
			if (!existsSync(dest)) symlinkSync(target, dest);
			this.add(target.startsWith("/") ? target : join(parent, target));
			return;
		}
		if (existsSync(dest)) return;
		const inode = `${stat.dev}:${stat.ino}`;
		const twin = this.inodes.get(inode);
		if (twin) {
			linkSync(twin, dest);
			return;
		}
		linkOrCopy(real, dest);
		this.inodes.set(inode, dest);
		for (const library of elfNeeds(real)) this.add(library);
	}
}

/** The staging tree only feeds tar: a hard link (same file system) saves copying hundreds of MB. */
function linkOrCopy(source: string, dest: string): void {
	try {
		linkSync(source, dest);
	} catch {
		copyFileSync(source, dest);
		chmodSync(dest, statSync(source).mode & 0o7777);
	}
}

/** Source maps, type declarations and docs: half of pi's closure, never read at run time. */
const NOT_AT_RUN_TIME = /\.(map|d\.[cm]?ts|md)$/;

/** A package tree as hard links (symlinks kept as symlinks), without what only tools read. */
function linkTree(source: string, dest: string): void {
	const stat = lstatSync(source);
	if (stat.isSymbolicLink()) symlinkSync(readlinkSync(source), dest);
	else if (stat.isDirectory()) {
		mkdirSync(dest, { recursive: true });
		for (const name of readdirSync(source)) linkTree(join(source, name), join(dest, name));
	} else if (stat.isFile() && !NOT_AT_RUN_TIME.test(source)) linkOrCopy(source, dest);
}

const LIBRARY_DIRS = [
	`/lib/${process.arch === "arm64" ? "aarch64" : "x86_64"}-linux-gnu`,
	`/usr/lib/${process.arch === "arm64" ? "aarch64" : "x86_64"}-linux-gnu`,
	"/lib64",
	"/usr/lib64",
	"/lib",
	"/usr/lib",
];

/**
 * What the dynamic loader needs for an ELF file: its interpreter and DT_NEEDED libraries, found in
 * the system's library directories. Read from the file itself (64-bit little-endian ELF), which is
 * what ldd would report one process per binary later. Not an ELF file: nothing.
 */
function elfNeeds(path: string): string[] {
	const fd = openSync(path, constants.O_RDONLY);
	try {
		const read = (offset: number, length: number): Buffer => {
			const buffer = Buffer.alloc(length);
			readSync(fd, buffer, 0, length, offset);
			return buffer;
		};
		const header = read(0, 64);
		if (header.toString("latin1", 0, 4) !== "\x7fELF" || header[4] !== 2 || header[5] !== 1) return [];
		const out: string[] = [];
		const phoff = Number(header.readBigUInt64LE(0x20));
		for (let i = 0; i < header.readUInt16LE(0x38); i++) {
			const ph = read(phoff + i * header.readUInt16LE(0x36), 56);
			if (ph.readUInt32LE(0) === 3)
				out.push(
					read(Number(ph.readBigUInt64LE(8)), Number(ph.readBigUInt64LE(0x20)))
						.toString("latin1")
						.replace(/\0.*$/s, ""),
				);
		}
		const shoff = Number(header.readBigUInt64LE(0x28));
		const shentsize = header.readUInt16LE(0x3a);
		const section = (index: number): Buffer => read(shoff + index * shentsize, 64);
		for (let i = 0; i < header.readUInt16LE(0x3c); i++) {
			const sh = section(i);
			if (sh.readUInt32LE(4) !== 6) continue; // SHT_DYNAMIC
			const dynamic = read(Number(sh.readBigUInt64LE(0x18)), Number(sh.readBigUInt64LE(0x20)));
			const strtab = Number(section(sh.readUInt32LE(0x28)).readBigUInt64LE(0x18));
			for (let at = 0; at + 16 <= dynamic.length; at += 16) {
				if (dynamic.readBigUInt64LE(at) !== 1n) continue; // DT_NEEDED
				const name = read(strtab + Number(dynamic.readBigUInt64LE(at + 8)), 256)
					.toString("latin1")
					.replace(/\0.*$/s, "");
				const found = LIBRARY_DIRS.map((dir) => join(dir, name)).find((candidate) => existsSync(candidate));
				if (!found) throw new Error(`worker image: ${path} needs ${name}, not found in ${LIBRARY_DIRS.join(", ")}`);
				out.push(found);
			}
		}
		return out;
	} finally {
		closeSync(fd);
	}
}

function buildRootFs(root: string): void {
	const fs = new RootFs(root);
	for (const link of ["bin", "sbin", "lib", "lib64"]) {
		const path = `/${link}`;
		if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink())
			symlinkSync(readlinkSync(path), join(root, link));
	}
	for (const path of systemFiles()) fs.add(path);
	if (!existsSync(join(root, "usr/bin/sh"))) symlinkSync("bash", join(root, "usr/bin/sh"));
	const bin = join(root, "usr/local/bin");
	mkdirSync(bin, { recursive: true });
	linkOrCopy(realpathSync(process.execPath), join(bin, "node"));
	for (const library of elfNeeds(realpathSync(process.execPath))) fs.add(library);
	const lib = join(root, "usr/local/lib");
	for (const path of piClosure()) {
		// A nested node_modules came along with its parent package already.
		if (!existsSync(join(REPO_ROOT, path)) || existsSync(join(lib, path))) continue;
		linkTree(join(REPO_ROOT, path), join(lib, path));
	}
	symlinkSync(relative(bin, join(lib, "node_modules", PI_PACKAGE, PI_BIN)), join(bin, "pi"));
	mkdirSync(join(root, "etc"), { recursive: true });
	writeFileSync(
		join(root, "etc/passwd"),
		"root:x:0:0:root:/tmp:/bin/bash\nworker:x:1000:1000:worker:/tmp:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
	);
	writeFileSync(join(root, "etc/group"), "root:x:0:\nworker:x:1000:\nnogroup:x:65534:\n");
	for (const dir of [
		"tmp",
		"workspace",
		"ab/pkg/runner",
		"ab/pkg/src",
		"ab/pkg/skills",
		"ab/run",
		"ab/session",
		"ab/pi",
		"proc",
		"sys",
		"dev",
	])
		mkdirSync(join(root, dir), { recursive: true });
	writeFileSync(join(root, "ab/pkg/package.json"), "");
	chmodSync(join(root, "tmp"), 0o1777);
}

function imageExists(tag: string): boolean {
	try {
		run("podman", ["image", "exists", tag]);
		return true;
	} catch {
		return false;
	}
}

/** One builder per machine at a time; a lock left by a dead builder is taken over. */
async function withLock<T>(fn: () => Promise<T>): Promise<T> {
	for (;;) {
		try {
			writeFileSync(LOCK, `${process.pid} ${processStartTime(process.pid)}`, { flag: "wx" });
			break;
		} catch {
			const [pid, start] = (existsSync(LOCK) ? readFileSync(LOCK, "utf8") : "").split(" ");
			if (!isAlive(Number(pid), start)) rmSync(LOCK, { force: true });
			else await new Promise((r) => setTimeout(r, 200));
		}
	}
	try {
		return await fn();
	} finally {
		rmSync(LOCK, { force: true });
	}
}

async function importRootFs(root: string, tag: string): Promise<void> {
	// A shell pipe: hundreds of MB should not flow through this process.
	const script =
		'set -o pipefail; tar -C "$1" --numeric-owner -cf - . | podman import -q --change "ENV PATH=/usr/local/bin:/usr/bin:/bin" --change "WORKDIR /workspace" - "$2" >/dev/null';
	await new Promise<void>((resolve, reject) => {
		const child = spawn("bash", ["-c", script, "import", root, tag], { stdio: ["ignore", "ignore", "pipe"] });
		let stderr = "";
		child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
		child.on("error", reject);
		child.on("close", (code) =>
			code === 0 ? resolve() : reject(new Error(`podman import failed (${code}): ${stderr}`)),
		);
	});
}

/** The image tag, building it first when this machine has none for the current inputs. */
export async function ensureWorkerImage(): Promise<WorkerImage> {
	const tag = `${IMAGE_NAME}:${contentKey()}`;
	if (imageExists(tag)) return { tag, built: false, buildMs: 0 };
	return withLock(async () => {
		if (imageExists(tag)) return { tag, built: false, buildMs: 0 };
		const started = Date.now();
		const root = mkdtempSync(join(tmpdir(), "pab-rootfs-"));
		try {
			buildRootFs(root);
			await importRootFs(root, tag);
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
		// Older builds of this image (and the variants built on them, first) are dead weight now.
		const key = tag.slice(tag.lastIndexOf(":") + 1);
		const all = run("podman", ["images", "--format", "{{.Repository}}:{{.Tag}}"]).split("\n");
		const old = all
			.filter((name) => name.startsWith(IMAGE_NAME) && !name.endsWith(`:${key}`))
			.sort((a, b) => b.length - a.length);
		for (const name of old) {
			try {
				run("podman", ["rmi", name]);
			} catch {
				// In use by a container of another test run: left for later.
			}
		}
		return { tag, built: true, buildMs: Date.now() - started };
	});
}

/**
 * The worker image with some of its files removed (an image without pi, git, ...), built on top of it
 * with `podman build` (no registry: FROM names the local image). Tagged by the base and what is gone,
 * so it is built once per worker image.
 */
export async function ensureImageWithout(base: string, paths: string[], name: string): Promise<string> {
	const tag = `localhost/pab-worker-${name}:${base.slice(base.lastIndexOf(":") + 1)}`;
	if (imageExists(tag)) return tag;
	return withLock(async () => {
		if (imageExists(tag)) return tag;
		const dir = mkdtempSync(join(tmpdir(), "pab-image-"));
		try {
			writeFileSync(join(dir, "Containerfile"), `FROM ${base}\nRUN rm -f ${paths.join(" ")}\n`);
			run("podman", ["build", "-q", "--pull=never", "-t", tag, dir]);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
		return tag;
	});
}
