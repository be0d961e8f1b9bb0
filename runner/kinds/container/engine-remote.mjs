// A container engine on another machine (`--engine-host`), in command lines only (pure; unit-tested).
// Bind mounts resolve on the engine's machine, so a remote engine's target is one long-lived container
// there, its station: the target's dir (store, mirrors, workspaces) in a named volume, our worker-side
// files copied in with `cp`, and host-agent.mjs reached by `<engine> exec -i <station> node ...`
// exactly as the ssh kind reaches a host with `ssh host node ...`. Code goes by git over the `ext::`
// transport through the same `exec -i`. Nothing here is ever a bind mount of this machine's paths.
import { createHash } from "node:crypto";

/** The target's dir inside the station: the named volume's mount point (not /ab: the worker image's own mount points). */
export const STATION_DIR = "/srv/agent-board";
export const LABEL_STATION = "agent-board.station";
export const STATION_PIDS_LIMIT = 4096;

/**
 * What `--engine-host` may be: a URL the engine's CLI takes (`ssh://user@host[:port]/socket`,
 * `tcp://`, `unix://`), or the name of a podman connection / docker context. Undefined when fine.
 * @param {unknown} value @returns {string | undefined}
 */
export function engineHostError(value) {
	if (typeof value !== "string" || !value) return "must be an engine URL or a connection name";
	if (value.startsWith("-")) return 'starts with "-": the engine would read it as an option';
	if (/[\s\x00-\x1f\x7f%]/.test(value)) return 'has a space, a control character or "%"';
	if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
		if (!/^(ssh|tcp|unix):\/\//i.test(value))
			return "is a URL of a scheme the engines do not take (ssh://, tcp:// or unix://)";
		return undefined;
	}
	if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(value))
		return "is neither a URL (ssh://user@host/socket) nor a connection or context name";
	return undefined;
}

/**
 * @typedef {object} RemoteEngine
 * @property {"docker" | "podman"} engine
 * @property {string} engineHost       a URL, or a podman connection / docker context name
 * @property {string} [engineIdentity] podman's `--identity` (an ssh key file); docker's ssh is the system ssh
 */

/**
 * Flags before the subcommand: podman `--remote --url <url> [--identity <key>]` or `--remote --connection
 * <name>`; docker `-H <url>` (DOCKER_HOST=ssh:// runs the system ssh: its config and agent apply) or
 * `--context <name>`.
 * @param {RemoteEngine} target @returns {string[]}
 */
export function remoteEngineArgs(target) {
	const url = /:\/\//.test(target.engineHost);
	if (target.engine === "docker") return url ? ["-H", target.engineHost] : ["--context", target.engineHost];
	return [
		"--remote",
		...(url ? ["--url", target.engineHost] : ["--connection", target.engineHost]),
		...(target.engineIdentity ? ["--identity", target.engineIdentity] : []),
	];
}

/**
 * The station's name (and its volume's): one per target of one store, so two boards sharing an engine
 * never share a station.
 * @param {string} storeDir @param {string} targetName
 */
export function stationName(storeDir, targetName) {
	return `ab-station-${targetName}-${createHash("sha256").update(storeDir).digest("hex").slice(0, 10)}`;
}

/**
 * @typedef {RemoteEngine & { image: string, network?: string, cpus?: number, memory?: string }} StationTarget
 */

/**
 * `run -d` of the station: hardened as every container of ours (all capabilities dropped,
 * no-new-privileges, read-only root, a private /tmp, a pids limit, --init so every run's runner and
 * tools are reaped), the target's dir in its named volume, `--network`/`--cpus`/`--memory` passed on.
 * It only waits; runs come by exec, their --env values inside each run's config on stdin (as for ssh).
 * @param {StationTarget} target @param {{ name: string, storeDir: string, targetName: string }} station
 */
export function stationRunArgs(target, station) {
	return [
		...remoteEngineArgs(target),
		"run",
		"-d",
		"--name",
		station.name,
		"--init",
		"--pull=never",
		"--label",
		`${LABEL_STATION}=${station.targetName}`,
		"--cap-drop",
		"all",
		"--security-opt",
		"no-new-privileges",
		"--read-only",
		"--tmpfs",
		"/tmp:rw,exec,mode=1777",
		"--pids-limit",
		String(STATION_PIDS_LIMIT),
		"-v",
		`${station.name}:${STATION_DIR}`,
		"-e",
		`HOME=${STATION_DIR}/home`,
		"-w",
		STATION_DIR,
		...(target.network ? ["--network", target.network] : []),
		...(target.cpus ? ["--cpus", String(target.cpus)] : []),
		...(target.memory ? ["--memory", target.memory] : []),
		"--",
		target.image,
		"node",
		"-e",
		"setInterval(() => {}, 2 ** 30)",
	];
}

/** `exec -i <station> <command...>`: stdin streamed, nothing of it on a command line. @param {RemoteEngine} target @param {string} name @param {string[]} command */
export function stationExecArgs(target, name, command) {
	return [...remoteEngineArgs(target), "exec", "-i", name, ...command];
}

/** A tar on stdin unpacked at `dest` in the station (`cp -`: the API takes a tar). @param {RemoteEngine} target @param {string} name @param {string} dest */
export function stationCopyInArgs(target, name, dest) {
	return [...remoteEngineArgs(target), "cp", "-", `${name}:${dest}`];
}

/** Its state: "<running> <exit code>" (true/false). @param {RemoteEngine} target @param {string} name */
export function stationInspectArgs(target, name) {
	return [
		...remoteEngineArgs(target),
		"container",
		"inspect",
		"--format",
		"{{.State.Running}} {{.State.ExitCode}}",
		name,
	];
}

/** One word of git's `ext::` command: a space is `% `, a percent sign `%%`. @param {string} word */
const extWord = (word) => word.replace(/%/g, "%%").replace(/ /g, "% ");

/**
 * The station's mirror of a repository as a git remote: `ext::<engine> exec -i <station> node
 * <host-agent> %s <mirror>`, where git puts `receive-pack` (host-agent creates the mirror first and
 * holds its lock) or `upload-pack`. git runs the command without a shell; `ext::` must be allowed for
 * these commands only (`protocol.ext.allow`, through the environment).
 * @param {RemoteEngine} target @param {string} name @param {string} agent host-agent.mjs in the station @param {string} mirror
 * @returns {{ url: string, env: Record<string, string> }}
 */
export function stationGitRemote(target, name, agent, mirror) {
	const words = [target.engine, ...stationExecArgs(target, name, ["node", agent, "%s", mirror])];
	const url = `ext::${words.map((word) => (word === "%s" ? word : extWord(word))).join(" ")}`;
	return { url, env: { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "protocol.ext.allow", GIT_CONFIG_VALUE_0: "always" } };
}

/**
 * The engine's own failure on the way to the station (its stderr and exit code), or undefined when the
 * command inside answered: the engine cannot be reached (its host, ssh or service down: `unreachable`,
 * retried), ssh refused its host key or login (`host-key-changed`, `host-key-unknown`, `auth`), the station is not there or not running (`missing-agent`: the driver makes it and installs
 * our files, then tries again), anything else the engine refused (`remote`).
 * @param {"docker" | "podman"} engine @param {string} stderr @param {number | null} code
 * @returns {{ kind: string, reason: string } | undefined}
 */
export function stationFailure(engine, stderr, code) {
	const line =
		stderr
			.split("\n")
			.map((l) => l.trim())
			.filter((l) => /^Error\b/i.test(l) || /^time=.*level=(error|fatal)/.test(l))
			.pop() ?? "";
	// eslint-disable-next-line no-control-regex
	const said = line.replace(/[\x00-\x1f\x7f]/g, "").slice(0, 300);
	if (
		/no such container|no container with name or id|can only (create exec sessions|exec) (on|into) running containers|is not running/i.test(
			stderr,
		)
	)
		return { kind: "missing-agent", reason: `the station container is not running on ${engine}'s machine (${said})` };
	if (/knownhosts: key mismatch|host key mismatch|REMOTE HOST IDENTIFICATION HAS CHANGED/i.test(stderr))
		return {
			kind: "host-key-changed",
			reason: `the engine's machine has another host key than known_hosts holds (${said})`,
		};
	if (/knownhosts: key is unknown|Host key verification failed/i.test(stderr))
		return { kind: "host-key-unknown", reason: `the engine's machine's host key is not trusted (${said})` };
	if (/unable to authenticate|permission denied \(publickey|no supported methods remain/i.test(stderr))
		return { kind: "auth", reason: `${engine}'s ssh login to the engine's machine failed (${said})` };
	if (
		/unable to connect to podman|cannot connect to (the docker daemon|podman)|error during connect|connection refused|handshake failed|no route to host|i\/o timeout|dial tcp|ssh: /i.test(
			stderr,
		)
	)
		return { kind: "unreachable", reason: `${engine} cannot reach its engine (${said})` };
	// podman exits 125 (docker 1 with "Error response from daemon") when it failed itself, not the command inside.
	if (said && (code === 125 || /Error response from daemon/i.test(said)))
		return { kind: "remote", reason: `${engine}: ${said}` };
	return undefined;
}
