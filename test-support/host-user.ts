/**
 * A second Unix user for ssh-target tests, created per fixture (`pabh-<hex>`, its own home) and removed
 * with every process it left: the "remote" side of a target on this machine. It gets a Node >= 22.19
 * and a `pi` wrapper (this repository's pi) in ~/bin, and a pi configuration in its own ~/.pi/agent.
 * Users left by a killed test run (their creator's pid is gone) are swept on the next creation.
 */
import { execFileSync } from "node:child_process";
import {
	chmodSync,
	chownSync,
	copyFileSync,
	cpSync,
	existsSync,
	linkSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	realpathSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { userInfo } from "node:os";
import { dirname, join } from "node:path";
import { processStartTime } from "../runner/store/proc.mjs";
import { PI_BIN, PI_PACKAGE, piClosure } from "./pi-closure.ts";
import { REPO_ROOT } from "./pi-harness.ts";

const MARK = "pab-test-host";

export interface HostUser {
	name: string;
	uid: number;
	gid: number;
	home: string;
	/** PATH the host's non-interactive shell gets (sshd SetEnv): ~/bin first. */
	path: string;
	/** Writes ~/.pi/agent/{models,auth,settings}.json (owned by the user, 0600). */
	writePiConfig(files: { models?: unknown; auth?: unknown; settings?: unknown }): void;
	/** Live pids of this user (everything a stop must have ended). */
	processes(): number[];
	remove(): void;
}

function sh(command: string, args: string[]): string {
	return execFileSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** pids whose real uid is `uid` (from /proc/<pid>/status). */
export function pidsOfUid(uid: number): number[] {
	const out: number[] = [];
	for (const name of readdirSync("/proc")) {
		const pid = Number(name);
		if (!Number.isInteger(pid) || pid <= 1) continue;
		try {
			const status = readFileSync(`/proc/${pid}/status`, "utf8");
			const line = /^Uid:\s+(\d+)/m.exec(status);
			const state = /^State:\s+(\S)/m.exec(status)?.[1];
			if (line && Number(line[1]) === uid && state !== "Z") out.push(pid);
		} catch {
			// Exited while we looked.
		}
	}
	return out;
}

function killUid(uid: number): void {
	for (let round = 0; round < 40; round++) {
		const pids = pidsOfUid(uid);
		if (pids.length === 0) return;
		for (const pid of pids) {
			try {
				process.kill(pid, "SIGKILL");
			} catch {
				// Gone already.
			}
		}
		Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
	}
}

function deleteUser(name: string, uid: number): void {
	killUid(uid);
	try {
		sh("userdel", ["-r", "-f", name]);
	} catch {
		// Already gone, or its mail spool was missing (userdel still removed the user).
	}
}

/** Processes whose command line mentions `needle` (a stale fixture's sshd). */
function pidsMentioning(needle: string): number[] {
	const out: number[] = [];
	for (const name of readdirSync("/proc")) {
		const pid = Number(name);
		if (!Number.isInteger(pid) || pid <= 1) continue;
		try {
			if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(needle)) out.push(pid);
		} catch {
			// Exited while we looked.
		}
	}
	return out;
}

/** Removes test users whose creating process is gone (a test run killed before its cleanup), with their fixture. */
function sweepStaleUsers(): void {
	for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
		const [name, , uid, , gecos] = line.split(":");
		if (!name || !gecos?.startsWith(MARK)) continue;
		const [, pid, start, fixture] = gecos.split(" ");
		if (processStartTime(Number(pid)) === start) continue;
		if (fixture?.includes("/pab-sshd-")) {
			for (const stale of pidsMentioning(`${fixture}/`)) {
				try {
					process.kill(stale, "SIGKILL");
				} catch {
					// Gone already.
				}
			}
			rmSync(fixture, { recursive: true, force: true });
		}
		deleteUser(name, Number(uid));
	}
}

/** The node running the tests, linked (or copied) where the host user can execute it. */
function installNode(binDir: string): void {
	const source = realpathSync(process.execPath);
	const target = join(binDir, "node");
	try {
		linkSync(source, target);
	} catch {
		copyFileSync(source, target);
	}
	// A hard link shares the inode: it only needs to be readable and executable by others.
	chmodSync(target, statSync(target).mode | 0o555);
}

/** True when `uid` can read `file` through every directory above it (other-permission bits). */
function readableByOthers(file: string): boolean {
	let path = file;
	for (;;) {
		const parent = dirname(path);
		if (parent === path) return true;
		if ((statSync(parent).mode & 0o001) === 0) return false;
		path = parent;
	}
}

/** ~/bin/pi: this repository's pi when the user can read it, else a private copy of pi's closure. */
function installPi(home: string, binDir: string): void {
	let cli = join(REPO_ROOT, "node_modules", PI_PACKAGE, PI_BIN);
	if (!readableByOthers(cli)) {
		const lib = join(home, ".local/lib/pi");
		for (const path of piClosure()) {
			if (existsSync(join(REPO_ROOT, path))) cpSync(join(REPO_ROOT, path), join(lib, path), { recursive: true });
		}
		cli = join(lib, "node_modules", PI_PACKAGE, PI_BIN);
	}
	writeFileSync(join(binDir, "pi"), `#!/bin/sh\nexec node '${cli}' "$@"\n`, { mode: 0o755 });
}

function chownTree(path: string, uid: number, gid: number): void {
	chownSync(path, uid, gid);
	if (!statSync(path).isDirectory()) return;
	for (const name of readdirSync(path)) chownTree(join(path, name), uid, gid);
}

/** `fixture`: a directory of the creator's (sshd config, keys) removed with a stale user. */
export function createHostUser(fixture = ""): HostUser {
	sweepStaleUsers();
	const name = `pabh-${Math.random().toString(16).slice(2, 10)}`;
	const gecos = `${MARK} ${process.pid} ${processStartTime(process.pid) ?? ""} ${fixture}`.trim();
	sh("useradd", ["--create-home", "--shell", "/bin/bash", "--comment", gecos, name]);
	// A locked account ("!") may not log in at all under UsePAM no; "*" means: no password, keys only.
	sh("usermod", ["-p", "*", name]);
	const uid = Number(sh("id", ["-u", name]).trim());
	const gid = Number(sh("id", ["-g", name]).trim());
	const home = sh("getent", ["passwd", name]).split(":")[5] ?? `/home/${name}`;
	const binDir = join(home, "bin");
	try {
		mkdirSync(binDir, { recursive: true });
		installNode(binDir);
		installPi(home, binDir);
		// Not the node link: a hard link shares its owner with the original.
		chownSync(binDir, uid, gid);
		chownSync(join(binDir, "pi"), uid, gid);
		if (existsSync(join(home, ".local"))) chownTree(join(home, ".local"), uid, gid);
	} catch (error) {
		deleteUser(name, uid);
		throw error;
	}
	const path = `${binDir}:/usr/local/bin:/usr/bin:/bin`;
	return {
		name,
		uid,
		gid,
		home,
		path,
		writePiConfig(files) {
			const dir = join(home, ".pi/agent");
			mkdirSync(dir, { recursive: true, mode: 0o700 });
			for (const [file, value] of [
				["models.json", files.models],
				["auth.json", files.auth],
				["settings.json", files.settings],
			] as const) {
				if (value !== undefined)
					writeFileSync(join(dir, file), `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
			}
			chownTree(join(home, ".pi"), uid, gid);
		},
		processes: () => pidsOfUid(uid),
		remove: () => deleteUser(name, uid),
	};
}

/**
 * This process's own user as the "host" (a target on this machine as yourself: `--ssh localhost`). Its
 * tools and pi configuration live in `fixture` (node and a pi wrapper in <fixture>/bin, the agent dir in
 * <fixture>/agent, which sshd's SetEnv names), so nothing of the real home is read or written; `home`
 * is a fixture dir meant for `--dir <home>/... --dir-absolute`. Its processes are not told apart from
 * this one's (`processes` is empty), and `remove` removes nothing.
 */
export function selfAsHostUser(fixture: string): HostUser & { agentDir: string } {
	const me = userInfo();
	const binDir = join(fixture, "bin");
	const home = join(fixture, "self-home");
	const agentDir = join(fixture, "agent");
	for (const dir of [binDir, home, agentDir]) mkdirSync(dir, { recursive: true, mode: 0o700 });
	symlinkSync(realpathSync(process.execPath), join(binDir, "node"));
	writeFileSync(
		join(binDir, "pi"),
		`#!/bin/sh\nexec node '${join(REPO_ROOT, "node_modules", PI_PACKAGE, PI_BIN)}' "$@"\n`,
		{ mode: 0o755 },
	);
	return {
		name: me.username,
		uid: me.uid,
		gid: me.gid,
		home,
		agentDir,
		path: `${binDir}:/usr/local/bin:/usr/bin:/bin`,
		writePiConfig(files) {
			for (const [file, value] of [
				["models.json", files.models],
				["auth.json", files.auth],
				["settings.json", files.settings],
			] as const) {
				if (value !== undefined)
					writeFileSync(join(agentDir, file), `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
			}
		},
		processes: () => [],
		remove: () => undefined,
	};
}
