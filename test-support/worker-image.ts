/**
 * An offline worker image for podman, built from this machine's own files (no registry can be
 * reached here): a root file system with the node running the tests, the installed pi package (its
 * package-lock closure), bash, coreutils, grep, sed, findutils and git with the shared libraries each
 * needs, imported with `podman import`. Tagged by a hash of its inputs, so it is built once per
 * machine (concurrent builders wait on a lock) and reused by every test after that.
 */
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, closeSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync, linkSync, writeFileSync, constants } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { isAlive, processStartTime } from "../runner/proc.mjs";
import { PI_BIN, PI_PACKAGE, piClosure } from "./pi-closure.ts";
import { REPO_ROOT } from "./pi-harness.ts";

export const IMAGE_NAME = "localhost/pab-worker";
const SYSTEM_PACKAGES = ["bash", "coreutils", "grep", "sed", "findutils", "git"];
/** git helpers that reach networks or GUIs: not needed offline, and they pull in large libraries. */
const GIT_SKIP = /http|imap|daemon|instaweb|svn|cvs|p4|archimport|send-email|libsecret|gui|gitk|shell|scalar|web--browse/;
const LOCK = join(tmpdir(), "pab-worker-image.lock");

export interface WorkerImage {
	tag: string;
	/** False when the image already existed. */
	built: boolean;
	buildMs: number;
}

function run(command: string, args: string[]): string {
	return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 1024 * 1024 });
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
		if (twin) linkSync(twin, dest);
		else {
			copyFileSync(real, dest);
			chmodSync(dest, stat.mode & 0o7777);
			this.inodes.set(inode, dest);
		}
		if (stat.mode & 0o111 && isElf(real)) for (const lib of sharedLibraries(real)) this.add(lib);
	}
}

function isElf(path: string): boolean {
	const fd = openSync(path, constants.O_RDONLY);
	try {
		const head = Buffer.alloc(4);
		return readSync(fd, head, 0, 4, 0) === 4 && head.toString("latin1") === "\x7fELF";
	} finally {
		closeSync(fd);
	}
}

function sharedLibraries(binary: string): string[] {
	let out = "";
	try {
		out = run("ldd", [binary]);
	} catch {
		return []; // statically linked or not a dynamic executable
	}
	const libs: string[] = [];
	for (const line of out.split("\n")) {
		const match = /=>\s+(\/\S+)|^\s*(\/\S+)\s+\(/.exec(line);
		const path = match?.[1] ?? match?.[2];
		if (path) libs.push(path);
	}
	return libs;
}

function buildRootFs(root: string): void {
	const fs = new RootFs(root);
	for (const link of ["bin", "sbin", "lib", "lib64"]) {
		const path = `/${link}`;
		if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) symlinkSync(readlinkSync(path), join(root, link));
	}
	for (const path of systemFiles()) fs.add(path);
	if (!existsSync(join(root, "usr/bin/sh"))) symlinkSync("bash", join(root, "usr/bin/sh"));
	const bin = join(root, "usr/local/bin");
	mkdirSync(bin, { recursive: true });
	copyFileSync(realpathSync(process.execPath), join(bin, "node"));
	chmodSync(join(bin, "node"), 0o755);
	fs.add(realpathSync(process.execPath)); // its shared libraries (the copy lands at its own path too)
	rmSync(join(root, realpathSync(process.execPath)), { force: true });
	const lib = join(root, "usr/local/lib");
	for (const path of piClosure()) {
		// A nested node_modules came along with its parent package already.
		if (!existsSync(join(REPO_ROOT, path)) || existsSync(join(lib, path))) continue;
		mkdirSync(dirname(join(lib, path)), { recursive: true });
		execFileSync("cp", ["-a", join(REPO_ROOT, path), dirname(join(lib, path))], { stdio: "ignore" });
	}
	symlinkSync(relative(bin, join(lib, "node_modules", PI_PACKAGE, PI_BIN)), join(bin, "pi"));
	mkdirSync(join(root, "etc"), { recursive: true });
	writeFileSync(join(root, "etc/passwd"), "root:x:0:0:root:/tmp:/bin/bash\nworker:x:1000:1000:worker:/tmp:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
	writeFileSync(join(root, "etc/group"), "root:x:0:\nworker:x:1000:\nnogroup:x:65534:\n");
	for (const dir of ["tmp", "workspace", "ab/pkg/runner", "ab/pkg/src", "ab/pkg/skills", "ab/run", "ab/session", "ab/pi", "proc", "sys", "dev"]) mkdirSync(join(root, dir), { recursive: true });
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
	await new Promise<void>((resolve, reject) => {
		const tar = spawn("tar", ["-C", root, "--numeric-owner", "-cf", "-", "."], { stdio: ["ignore", "pipe", "inherit"] });
		const podman = spawn("podman", ["import", "-q", "--change", "ENV PATH=/usr/local/bin:/usr/bin:/bin", "--change", "WORKDIR /workspace", "-", tag], { stdio: ["pipe", "ignore", "pipe"] });
		let stderr = "";
		podman.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
		tar.stdout.pipe(podman.stdin);
		podman.on("error", reject);
		podman.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`podman import failed (${code}): ${stderr}`))));
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
		// Older builds of this image are dead weight once a new one exists.
		for (const old of run("podman", ["images", "--format", "{{.Repository}}:{{.Tag}}", IMAGE_NAME]).split("\n")) {
			if (old && old !== tag) {
				try {
					run("podman", ["rmi", old]);
				} catch {
					// In use by a container of another test run: left for later.
				}
			}
		}
		return { tag, built: true, buildMs: Date.now() - started };
	});
}
