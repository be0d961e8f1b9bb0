/**
 * A real OpenSSH sshd on 127.0.0.1 (a free port), with its own config and host key, logging into a
 * fresh second Unix user (test-support/host-user.ts) by a key made here. Its ssh config file names the
 * host by an alias with the port, key and a known_hosts holding this host key (StrictHostKeyChecking
 * yes), so targets are added as `--ssh <alias> --ssh-config <file>`. sshd can be stopped (with its
 * established connections) and restarted mid-test, and its host key changed.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection, createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHostUser, selfAsHostUser, type HostUser } from "./host-user.ts";
import { waitFor } from "./pi-harness.ts";

export interface SshResult {
	code: number | null;
	stdout: string;
	stderr: string;
}

export interface SshHost {
	alias: string;
	/** The ssh config file for `ssh -F` (`--ssh-config`). */
	configFile: string;
	port: number;
	user: HostUser;
	/** Fixture directory (keys, sshd config, logs); root-only. */
	root: string;
	/** Runs `ssh -F <config> <alias> <command>` (BatchMode), stdin from `input`. */
	ssh(command: string, options?: { input?: string; extra?: string[] }): Promise<SshResult>;
	/** Stops sshd and cuts every connection it holds (the host "goes away"; its processes stay). */
	stop(): Promise<void>;
	/** Starts sshd again on the same port with the current host key. */
	start(): Promise<void>;
	/** A new host key, sshd restarted: the known_hosts entry no longer matches. */
	changeHostKey(): Promise<void>;
	/** Writes the current host key into known_hosts (the user accepted the new key). */
	trustHostKey(): void;
	cleanup(): Promise<void>;
}

function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.on("error", reject);
		server.listen(0, "127.0.0.1", () => {
			const port = (server.address() as AddressInfo).port;
			server.close(() => resolve(port));
		});
	});
}

function accepts(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const socket = createConnection({ host: "127.0.0.1", port });
		socket.once("connect", () => {
			socket.destroy();
			resolve(true);
		});
		socket.once("error", () => resolve(false));
	});
}

function keygen(path: string): void {
	rmSync(path, { force: true });
	rmSync(`${path}.pub`, { force: true });
	execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "pab-test", "-f", path], { stdio: "ignore" });
}

/** Every process whose parent chain leads to `root` (sshd's per-connection children). */
function descendants(root: number): number[] {
	const parents = new Map<number, number>();
	for (const name of execFileSync("ps", ["-e", "-o", "pid=,ppid="], { encoding: "utf8" }).trim().split("\n")) {
		const [pid, ppid] = name.trim().split(/\s+/).map(Number);
		if (pid && ppid !== undefined) parents.set(pid, ppid);
	}
	const out: number[] = [];
	for (const pid of parents.keys()) {
		for (let p = parents.get(pid); p; p = parents.get(p)) {
			if (p === root) {
				out.push(pid);
				break;
			}
		}
	}
	return out;
}

function comm(pid: number): string {
	try {
		return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
	} catch {
		return "";
	}
}

/**
 * `logLevel`: sshd's (VERBOSE logs every session's start and close, which a fleet's test and bench count);
 * its limits (MaxSessions 10, MaxStartups 10:30:100) stay sshd's defaults. `self`: log in as this
 * process's own user (a target on this machine as yourself), keyed by a fixture authorized_keys file,
 * with its node, pi and pi configuration in the fixture (selfAsHostUser). `setEnv`: more NAME=value
 * pairs for sshd's SetEnv (a rootless engine's XDG_RUNTIME_DIR).
 */
export async function startSshHost(
	options: {
		alias?: string;
		logLevel?: "INFO" | "VERBOSE";
		self?: boolean;
		setEnv?: (user: HostUser) => string[];
	} = {},
): Promise<SshHost> {
	const root = mkdtempSync(join(tmpdir(), "pab-sshd-"));
	let user: HostUser;
	try {
		user = options.self ? selfAsHostUser(root) : createHostUser(root);
	} catch (error) {
		rmSync(root, { recursive: true, force: true });
		throw error;
	}
	const alias = options.alias ?? "pab-host";
	const hostKey = join(root, "host_key");
	const clientKey = join(root, "client_key");
	const knownHosts = join(root, "known_hosts");
	const configFile = join(root, "ssh_config");
	const sshdConfig = join(root, "sshd_config");
	let port = 0;
	let daemon: ChildProcess | undefined;

	keygen(hostKey);
	keygen(clientKey);
	// Yourself: the key goes in a fixture file (your own ~/.ssh is left alone).
	const selfKeys = join(root, "authorized_keys");
	if (options.self) writeFileSync(selfKeys, readFileSync(`${clientKey}.pub`), { mode: 0o600 });
	else {
		const sshDir = join(user.home, ".ssh");
		mkdirSync(sshDir, { recursive: true, mode: 0o700 });
		writeFileSync(join(sshDir, "authorized_keys"), readFileSync(`${clientKey}.pub`), { mode: 0o600 });
		execFileSync("chown", ["-R", `${user.uid}:${user.gid}`, sshDir]);
	}
	// sshd refuses to start without its privilege separation directory.
	mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });

	const writeConfigs = (): void => {
		writeFileSync(
			sshdConfig,
			[
				`Port ${port}`,
				"ListenAddress 127.0.0.1",
				`HostKey ${hostKey}`,
				`PidFile ${join(root, "sshd.pid")}`,
				`LogLevel ${options.logLevel ?? "INFO"}`,
				`AllowUsers ${user.name}`,
				"PasswordAuthentication no",
				"KbdInteractiveAuthentication no",
				"UsePAM no",
				...(options.self
					? ["PermitRootLogin prohibit-password", `AuthorizedKeysFile ${selfKeys}`, "StrictModes no"]
					: ["PermitRootLogin no"]),
				// The host's non-interactive PATH: node and pi resolve as they would on a configured box.
				// Yourself: a home of the fixture's too, so your shell's start-up files (a slow ~/.bashrc) stay out of it.
				`SetEnv PATH=${user.path} PI_OFFLINE=1 PI_SKIP_VERSION_CHECK=1 PI_TELEMETRY=0${options.self ? ` PI_CODING_AGENT_DIR=${join(root, "agent")} HOME=${user.home}` : ""}${(options.setEnv?.(user) ?? []).map((pair) => ` ${pair}`).join("")}`,
				"",
			].join("\n"),
		);
		writeFileSync(
			configFile,
			[
				`Host ${alias}`,
				"  HostName 127.0.0.1",
				`  Port ${port}`,
				`  User ${user.name}`,
				`  IdentityFile ${clientKey}`,
				"  IdentitiesOnly yes",
				`  UserKnownHostsFile ${knownHosts}`,
				"  GlobalKnownHostsFile /dev/null",
				"  StrictHostKeyChecking yes",
				"  LogLevel ERROR",
				"",
			].join("\n"),
		);
	};
	const trustHostKey = (): void => {
		const [type, key] = readFileSync(`${hostKey}.pub`, "utf8").trim().split(/\s+/);
		writeFileSync(knownHosts, `[127.0.0.1]:${port} ${type} ${key}\n`);
	};

	const start = async (): Promise<void> => {
		for (let attempt = 0; ; attempt++) {
			if (!port) port = await freePort();
			writeConfigs();
			const child = spawn("/usr/sbin/sshd", ["-D", "-f", sshdConfig, "-E", join(root, "sshd.log")], {
				stdio: "ignore",
			});
			let exited = false;
			child.once("exit", () => (exited = true));
			try {
				await waitFor(async () => exited || (await accepts(port)), `sshd to listen on 127.0.0.1:${port}`, 10_000);
			} catch (error) {
				child.kill("SIGKILL");
				throw error;
			}
			if (!exited) {
				daemon = child;
				return;
			}
			// The port was taken between the probe and sshd's bind: pick another (only before the first start).
			if (attempt >= 3) throw new Error(`sshd did not start: ${readFileSync(join(root, "sshd.log"), "utf8")}`);
			if (daemon === undefined) port = 0;
		}
	};

	const stop = async (): Promise<void> => {
		const listener = daemon;
		daemon = undefined;
		if (!listener?.pid) return;
		const connections = descendants(listener.pid).filter((pid) => comm(pid) === "sshd");
		for (const pid of [listener.pid, ...connections]) {
			try {
				process.kill(pid, "SIGKILL");
			} catch {
				// Already gone.
			}
		}
		await waitFor(async () => !(await accepts(port)), "sshd to stop listening", 10_000);
	};

	const ssh = (command: string, options: { input?: string; extra?: string[] } = {}): Promise<SshResult> =>
		new Promise((resolve, reject) => {
			const child = spawn(
				"ssh",
				["-F", configFile, "-o", "BatchMode=yes", ...(options.extra ?? []), alias, command],
				{ stdio: ["pipe", "pipe", "pipe"] },
			);
			let stdout = "";
			let stderr = "";
			child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
			child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
			child.stdin.on("error", () => undefined);
			child.stdin.end(options.input ?? "");
			child.on("error", reject);
			child.on("close", (code) => resolve({ code, stdout, stderr }));
		});

	try {
		await start();
		trustHostKey();
		chmodSync(root, 0o700);
	} catch (error) {
		user.remove();
		rmSync(root, { recursive: true, force: true });
		throw error;
	}

	return {
		alias,
		configFile,
		get port() {
			return port;
		},
		user,
		root,
		ssh,
		stop,
		start,
		async changeHostKey() {
			await stop();
			keygen(hostKey);
			await start();
		},
		trustHostKey,
		async cleanup() {
			await stop();
			user.remove();
			rmSync(root, { recursive: true, force: true });
		},
	};
}
