// The system ssh, used the way a user's config expects (their agent, keys, ProxyJump, known_hosts;
// `-F` for --ssh-config), with BatchMode so nothing ever prompts, and one multiplexed connection per
// target (ControlMaster/ControlPath/ControlPersist). ssh is started without the run tag in its
// environment: the background master outlives runs and must never hold a slot. Remote commands are
// one shell string of single-quoted words, built from paths and ids only.
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { RUN_TAG } from "../../store/proc.mjs";

/** How long an idle master stays up (seconds). */
export const CONTROL_PERSIST_S = 600;
/** sun_path is 108 bytes; ssh adds ".XXXXXXXXXXXXXXXX" while it creates the socket. */
const MAX_CONTROL_PATH = 100;

/** An ssh target's snapshot (ssh-kind.mjs states its fields). @typedef {import("../kind.mjs").TargetSnapshot & { host: string, sshConfig?: string, dir: string, pi?: string[] }} SshTargetConfig */

/**
 * @typedef {object} SshTarget
 * @property {string} host          what the user gave: alias, [user@]host, ssh://[user@]host[:port]
 * @property {string} [sshConfig]   --ssh-config file (ssh -F)
 * @property {string} controlPath   the master's socket (controlPathFor)
 */

/**
 * @param {string} host
 * @returns {{ destination: string, port?: number }}
 */
export function parseSshHost(host) {
	if (typeof host !== "string" || !host) throw new Error("ssh host is empty");
	// ssh would read a leading "-" as an option; whitespace and controls have no place in a host name.
	if (host.startsWith("-") || /[\s\x00-\x1f\x7f'"`$\\;|&<>]/.test(host))
		throw new Error(`not an ssh host: ${JSON.stringify(host)}`);
	if (!host.startsWith("ssh://")) {
		if (!/^[A-Za-z0-9_][A-Za-z0-9._%:[\]-]*(@[A-Za-z0-9_[][A-Za-z0-9._%:[\]-]*)?$/.test(host))
			throw new Error(`not an ssh host: ${JSON.stringify(host)}`);
		return { destination: host };
	}
	const match = /^ssh:\/\/(?:([^@/:]+)@)?(\[[0-9A-Fa-f:.]+\]|[^@/:[\]]+)(?::(\d{1,5}))?\/?$/.exec(host);
	if (!match) throw new Error(`not an ssh URL (ssh://[user@]host[:port]): ${JSON.stringify(host)}`);
	const [, user, name = "", port] = match;
	const bare = name.startsWith("[") ? name.slice(1, -1) : name;
	const destination = user ? `${user}@${bare}` : bare;
	if (port === undefined) return { destination };
	const number = Number(port);
	if (number < 1 || number > 65535) throw new Error(`ssh port out of range: ${port}`);
	return { destination, port: number };
}

/**
 * Where a target's master socket lives: <stateDir>/cm, or, when that path is too long for a unix
 * socket, a short private directory under /tmp named by a hash of it.
 * @param {string} stateDir e.g. <store>/targets/<name>
 */
export function controlPathFor(stateDir) {
	const preferred = join(stateDir, "cm");
	if (Buffer.byteLength(preferred) <= MAX_CONTROL_PATH) {
		mkdirSync(stateDir, { recursive: true, mode: 0o700 });
		return preferred;
	}
	const dir = join("/tmp", `pab-cm-${process.getuid?.() ?? "u"}`);
	mkdirSync(dir, { recursive: true, mode: 0o700 });
	return join(dir, createHash("sha256").update(stateDir).digest("hex").slice(0, 16));
}

/**
 * How a target's ssh is run: its host, its -F file, and its master's socket under <store>/targets/<name>.
 * @param {{ name: string, host: string, sshConfig?: string }} target @param {string} storeDir
 * @returns {SshTarget}
 */
export function sshOf(target, storeDir) {
	return {
		host: target.host,
		...(target.sshConfig ? { sshConfig: target.sshConfig } : {}),
		controlPath: controlPathFor(join(storeDir, "targets", target.name)),
	};
}

/**
 * ssh options shared by every command to a target (before the destination).
 * @param {SshTarget} target @param {{ master?: "auto" | "no" }} [options]
 */
export function sshOptions(target, options = {}) {
	const { port } = parseSshHost(target.host);
	return [
		...(target.sshConfig ? ["-F", target.sshConfig] : []),
		...(port ? ["-p", String(port)] : []),
		"-o",
		"BatchMode=yes",
		"-o",
		`ControlMaster=${options.master ?? "auto"}`,
		"-o",
		`ControlPath=${target.controlPath}`,
		"-o",
		`ControlPersist=${CONTROL_PERSIST_S}`,
		"-o",
		"ServerAliveInterval=5",
		"-o",
		"ServerAliveCountMax=3",
		"-o",
		"ConnectTimeout=15",
	];
}

/** One word for a POSIX shell. @param {string} word */
export function shellQuote(word) {
	return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * argv for `ssh` running `remote` (argv words, quoted into the one string ssh sends).
 * @param {SshTarget} target @param {string[]} remote
 */
export function sshArgv(target, remote) {
	return [...sshOptions(target), "--", parseSshHost(target.host).destination, remote.map(shellQuote).join(" ")];
}

/** The environment for ssh and git-over-ssh: ours without the run tag. @param {NodeJS.ProcessEnv} [env] */
export function sshEnv(env = process.env) {
	const out = { ...env };
	delete out[RUN_TAG];
	return out;
}

/**
 * git over the same connection: GIT_SSH_COMMAND carries our options, the URL the destination and port.
 * @param {SshTarget} target @param {string} remotePath absolute path on the host
 */
export function gitRemote(target, remotePath) {
	const { destination, port } = parseSshHost(target.host);
	const at = destination.lastIndexOf("@");
	const hostPart = at >= 0 ? destination.slice(at + 1) : destination;
	const user = at >= 0 ? `${destination.slice(0, at)}@` : "";
	const hostInUrl = hostPart.includes(":") ? `[${hostPart}]` : hostPart;
	const options = sshOptions(target).filter((_, i, all) => all[i] !== "-p" && all[i - 1] !== "-p");
	return {
		url: `ssh://${user}${hostInUrl}${port ? `:${port}` : ""}${remotePath.startsWith("/") ? "" : "/"}${remotePath}`,
		env: { ...sshEnv(), GIT_SSH_COMMAND: ["ssh", ...options].map(shellQuote).join(" "), GIT_SSH_VARIANT: "ssh" },
	};
}

/**
 * @typedef {object} SshFailure
 * @property {"unreachable" | "auth" | "host-key-changed" | "host-key-unknown" | "remote"} kind
 * @property {string} reason  a short sentence with ssh's own words
 */

const PATTERNS = /** @type {const} */ ([
	["host-key-changed", /REMOTE HOST IDENTIFICATION HAS CHANGED|Host key for .* has changed/i, "host key changed"],
	["host-key-unknown", /No \S+ host key is known for|Host key verification failed/i, "host key not trusted"],
	["auth", /Permission denied|Too many authentication failures|no such identity/i, "authentication failed"],
	[
		"unreachable",
		/Connection refused|Connection timed out|timed out|No route to host|Network is unreachable|Could not resolve hostname|Name or service not known|Connection closed by|Connection reset|kex_exchange_identification|Broken pipe|Timeout, server .* not responding|port \d+: /i,
		"unreachable",
	],
]);

/** The lines of ssh's stderr worth showing, without the banner art and controls. @param {string} stderr */
function sshLines(stderr) {
	return stderr
		.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, " ")
		.split("\n")
		.map((line) => line.trim())
		.filter((line) => line && !/^@+$/.test(line) && !/^@\s.*\s@$/.test(line));
}

/**
 * Turns a failed ssh into a short reason, or undefined when ssh itself was fine (exit != 255: the
 * remote command failed, and its own words are in its output).
 * @param {string} stderr @param {number | null} code
 * @returns {SshFailure | undefined}
 */
export function sshFailure(stderr, code) {
	if (code !== 255) return undefined;
	const lines = sshLines(stderr);
	for (const [kind, pattern, what] of PATTERNS) {
		const line = lines.find((l) => pattern.test(l));
		if (line) {
			const detail =
				kind === "host-key-changed"
					? (lines.find((l) => /has changed and you have requested strict checking/i.test(l)) ?? line)
					: line;
			return { kind, reason: `${what} (ssh: ${clip(detail.replace(/^ssh: /, ""))})` };
		}
	}
	const last = lines.at(-1);
	return {
		kind: "unreachable",
		reason: last
			? `ssh failed (ssh: ${clip(last.replace(/^ssh: /, ""))})`
			: "connection lost (ssh exited 255 without a message)",
	};
}

/** @param {string} text */
function clip(text) {
	return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
