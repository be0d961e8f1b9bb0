/**
 * A remote container engine on this machine: podman's API service run as a fresh second Unix user
 * (rootless), behind that user's own sshd on 127.0.0.1 (test-support/sshd.ts), reached by the board as
 * `podman --remote --url ssh://<user>@127.0.0.1:<port><socket> --identity <key>`. The user gets
 * subordinate ids, containers.conf for these machines (runc, cgroupfs, a file events log), a runtime dir that sshd's
 * SetEnv names, and the offline worker image in its own storage (`podman save` as root into `podman
 * load` as the user). Cleanup ends the service and every container and process of the user, then the user.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "./pi-harness.ts";
import { startSshHost, type SshHost } from "./sshd.ts";
import { ensureWorkerImage } from "./worker-image.ts";

export interface RemoteEngine {
	host: SshHost;
	/** --engine-host */
	url: string;
	/** --engine-identity */
	identity: string;
	image: string;
	/** Runs podman as the engine's user, on its machine (what is in its storage). */
	podman(args: string[]): string;
	cleanup(): Promise<void>;
}

const CONTAINERS_CONF = [
	"[containers]",
	"default_ulimits = []",
	"[engine]",
	'runtime = "runc"',
	'cgroup_manager = "cgroupfs"',
	'events_logger = "file"',
	"",
].join("\n");

/** What podman needs for a rootless user here is missing, or undefined. */
export function remoteEngineMissing(): string | undefined {
	for (const tool of ["/usr/bin/newuidmap", "/usr/bin/newgidmap", "/usr/sbin/runuser"]) {
		if (!existsSync(tool)) return `${tool} is missing (apt-get install uidmap util-linux)`;
	}
	return undefined;
}

export async function startRemotePodman(): Promise<RemoteEngine> {
	const image = (await ensureWorkerImage()).tag;
	const runtimeOf = (home: string) => join(home, ".run");
	const host = await startSshHost({ setEnv: (user) => [`XDG_RUNTIME_DIR=${runtimeOf(user.home)}`] });
	const { user } = host;
	const runtime = runtimeOf(user.home);
	const socket = join(runtime, "podman.sock");
	// The user's own temp dir and cwd: the test's TMPDIR and the checkout may be root's private dirs.
	const userTmp = join(user.home, ".tmp");
	const env = [
		`HOME=${user.home}`,
		`XDG_RUNTIME_DIR=${runtime}`,
		`TMPDIR=${userTmp}`,
		`PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
	];
	const asUser = (args: string[]) => ["-u", user.name, "--", "env", ...env, ...args];
	let service: ChildProcess | undefined;
	const podman = (args: string[]) =>
		execFileSync("runuser", asUser(["podman", ...args]), {
			cwd: user.home,
			encoding: "utf8",
			stdio: ["ignore", "pipe", "pipe"],
			maxBuffer: 16 * 1024 * 1024,
		});
	const cleanup = async () => {
		try {
			podman(["rm", "-f", "-a", "-t", "0"]);
			podman(["volume", "prune", "-f"]);
		} catch {
			// The user's processes are all killed next anyway.
		}
		if (service?.pid && service.exitCode === null) service.kill("SIGKILL");
		await host.cleanup();
	};
	try {
		// useradd gives subordinate ids only where /etc/subuid exists already; else one range per uid.
		for (const [file, flag] of [
			["/etc/subuid", "--add-subuids"],
			["/etc/subgid", "--add-subgids"],
		] as const) {
			const listed =
				existsSync(file) &&
				readFileSync(file, "utf8")
					.split("\n")
					.some((line) => line.startsWith(`${user.name}:`));
			const start = 100_000 + user.uid * 65_536;
			if (!listed) execFileSync("usermod", [flag, `${start}-${start + 65_535}`, user.name], { stdio: "ignore" });
		}
		const conf = join(user.home, ".config", "containers");
		mkdirSync(conf, { recursive: true });
		writeFileSync(join(conf, "containers.conf"), CONTAINERS_CONF);
		mkdirSync(runtime, { mode: 0o700 });
		mkdirSync(userTmp, { mode: 0o700 });
		for (const dir of [join(user.home, ".config"), conf, join(conf, "containers.conf"), runtime, userTmp])
			chownSync(dir, user.uid, user.gid);
		// The image into the user's own storage: no registry here, so save as root and load as the user.
		execFileSync(
			"sh",
			[
				"-c",
				`podman save ${image} | runuser ${asUser(["podman", "load", "-q"])
					.map((w) => `'${w}'`)
					.join(" ")}`,
			],
			{ cwd: user.home, stdio: ["ignore", "ignore", "pipe"] },
		);
		service = spawn("runuser", asUser(["podman", "system", "service", "--time=0", `unix://${socket}`]), {
			cwd: user.home,
			stdio: "ignore",
			detached: true,
		});
		await waitFor(() => existsSync(socket), "podman's API service to listen", 60_000);
		return {
			host,
			url: `ssh://${user.name}@127.0.0.1:${host.port}${socket}`,
			identity: join(host.root, "client_key"),
			image,
			podman,
			cleanup,
		};
	} catch (error) {
		await cleanup();
		throw error;
	}
}
