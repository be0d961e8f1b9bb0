/**
 * A remote engine's command lines (engine-remote.mjs), pure: podman's and docker's own remote flags
 * (docker's cannot be run here: its argv is what these pin), the station's hardening with no mount of
 * this machine's paths, git's ext:: URL through `exec -i`, what `--engine-host` may be, and the
 * engine's failures on the way to the station in the link's failure kinds.
 */
import { describe, expect, it } from "vitest";
import { containerKind } from "../runner/kinds/container/container-kind.mjs";
import { usageOf } from "../runner/kinds/kind.mjs";
import { targetFromInput } from "../runner/kinds/kinds.mjs";
import {
	engineHostError,
	remoteEngineArgs,
	STATION_DIR,
	stationCopyInArgs,
	stationExecArgs,
	stationFailure,
	stationGitRemote,
	stationName,
	stationRunArgs,
} from "../runner/kinds/container/engine-remote.mjs";

const podman = {
	engine: "podman" as const,
	engineHost: "ssh://me@box:2222/run/user/1000/podman/podman.sock",
	engineIdentity: "/keys/my key",
};
const docker = { engine: "docker" as const, engineHost: "ssh://me@box" };

describe("a remote engine's command lines", () => {
	it("uses each engine's own remote flags: a URL or a connection (context) name", () => {
		expect(remoteEngineArgs(podman)).toEqual(["--remote", "--url", podman.engineHost, "--identity", "/keys/my key"]);
		expect(remoteEngineArgs({ engine: "podman", engineHost: "build-box" })).toEqual([
			"--remote",
			"--connection",
			"build-box",
		]);
		// docker -H ssh:// runs the system ssh, whose config and agent name the key.
		expect(remoteEngineArgs(docker)).toEqual(["-H", "ssh://me@box"]);
		expect(remoteEngineArgs({ engine: "docker", engineHost: "build-box" })).toEqual(["--context", "build-box"]);
		expect(stationExecArgs(docker, "st", ["node", "-v"])).toEqual([
			"-H",
			"ssh://me@box",
			"exec",
			"-i",
			"st",
			"node",
			"-v",
		]);
		expect(stationCopyInArgs(docker, "st", "/srv/agent-board/pkg/x")).toEqual([
			"-H",
			"ssh://me@box",
			"cp",
			"-",
			"st:/srv/agent-board/pkg/x",
		]);
	});

	it("runs one hardened station per target and store, its dir in a named volume and nothing of this machine mounted", () => {
		const name = stationName("/home/me/.pi/agent-board", "far");
		expect(name).toMatch(/^ab-station-far-[0-9a-f]{10}$/);
		expect(stationName("/other/store", "far")).not.toBe(name);
		const args = stationRunArgs(
			{ ...docker, image: "w:1", network: "host", cpus: 2, memory: "4g" },
			{ name, storeDir: "/s", targetName: "far" },
		);
		expect(args.slice(0, 4)).toEqual(["-H", "ssh://me@box", "run", "-d"]);
		for (const flag of ["--init", "--read-only", "--pull=never", "no-new-privileges"]) expect(args).toContain(flag);
		expect(args.join(" ")).toContain("--cap-drop all");
		expect(args.join(" ")).toContain("--network host --cpus 2 --memory 4g");
		// The only volume is the station's own, by name; no -e but HOME inside it (--env values go with each run's config).
		const volumes = args.flatMap((arg, i) => (args[i - 1] === "-v" ? [arg] : []));
		expect(volumes).toEqual([`${name}:${STATION_DIR}`]);
		const engineSide = args.slice(0, args.indexOf("--"));
		expect(engineSide.flatMap((arg, i) => (engineSide[i - 1] === "-e" ? [arg] : []))).toEqual([
			`HOME=${STATION_DIR}/home`,
		]);
		expect(args.slice(args.indexOf("--"), args.indexOf("--") + 3)).toEqual(["--", "w:1", "node"]);
	});

	it("reaches the station's mirror by git over ext::, both services through host-agent, spaces escaped", () => {
		const remote = stationGitRemote(
			podman,
			"st",
			"/srv/agent-board/pkg/v/runner/far/host-agent.mjs",
			"/srv/agent-board/repos/r-1.git",
		);
		expect(remote.url).toBe(
			`ext::podman --remote --url ${podman.engineHost} --identity /keys/my% key exec -i st node /srv/agent-board/pkg/v/runner/far/host-agent.mjs %s /srv/agent-board/repos/r-1.git`,
		);
		expect(remote.env).toEqual({
			GIT_CONFIG_COUNT: "1",
			GIT_CONFIG_KEY_0: "protocol.ext.allow",
			GIT_CONFIG_VALUE_0: "always",
		});
	});

	it("takes an engine URL or a connection name as --engine-host, nothing an engine would read otherwise", () => {
		for (const fine of [
			"ssh://me@box",
			"ssh://me@10.0.0.2:2222/run/user/1000/podman/podman.sock",
			"tcp://box:2376",
			"unix:///run/podman.sock",
			"build-box",
		])
			expect(engineHostError(fine)).toBeUndefined();
		expect(engineHostError("--url=x")).toContain("option");
		expect(engineHostError("http://box")).toContain("scheme");
		expect(engineHostError("ssh://me@box %s")).toContain("space");
		expect(engineHostError("a/b")).toContain("neither a URL");
	});

	it("is added with targets add: the engine host and podman's key, in the usage line and the config", () => {
		expect(usageOf(containerKind)).toContain(
			"--image <image> [--engine-host <url|name>] [--engine-identity <key file>] [--network <mode>]",
		);
		expect(
			targetFromInput({
				kind: "container",
				engine: "podman",
				image: "w:1",
				engineHost: podman.engineHost,
				engineIdentity: "/etc/hostname",
				network: "host",
			}),
		).toEqual({
			kind: "container",
			engine: "podman",
			image: "w:1",
			engineHost: podman.engineHost,
			engineIdentity: "/etc/hostname",
			network: "host",
			max: 4,
			env: [],
		});
		expect(() =>
			targetFromInput({ kind: "container", engine: "podman", image: "w:1", engineIdentity: "/etc/hostname" }),
		).toThrow("--engine-identity goes with --engine-host");
		expect(() =>
			targetFromInput({
				kind: "container",
				engine: "podman",
				image: "w:1",
				engineHost: "box",
				engineIdentity: "/no/such/key",
			}),
		).toThrow("--engine-identity: no such file: /no/such/key");
		expect(
			containerKind.describe({
				kind: "container",
				engine: "podman",
				image: "w:1",
				engineHost: "box",
				max: 4,
				env: [],
			}),
		).toBe("podman on box image w:1");
	});

	it("tells the engine's own failures from the command's: unreachable, host key or login refused, no station, refused", () => {
		expect(
			stationFailure(
				"podman",
				"Error: unable to connect to Podman socket: failed to connect: dial tcp 127.0.0.1:2222: connect: connection refused",
				125,
			),
		).toMatchObject({ kind: "unreachable", reason: expect.stringContaining("podman cannot reach its engine") });
		expect(
			stationFailure(
				"podman",
				"Error: failed to connect: ssh: handshake failed: ssh: unable to authenticate, attempted methods [none publickey]",
				125,
			),
		).toMatchObject({ kind: "auth" });
		expect(
			stationFailure("podman", "Error: failed to connect: ssh: handshake failed: knownhosts: key mismatch", 125),
		).toMatchObject({ kind: "host-key-changed" });
		expect(stationFailure("docker", "error during connect: Host key verification failed.", 1)).toMatchObject({
			kind: "host-key-unknown",
		});
		expect(
			stationFailure("podman", 'Error: no container with name or id "st" found: no such container', 125),
		).toMatchObject({ kind: "missing-agent" });
		expect(stationFailure("docker", "Error response from daemon: Container abc is not running", 1)).toMatchObject({
			kind: "missing-agent",
		});
		expect(stationFailure("podman", "Error: something odd", 125)).toEqual({
			kind: "remote",
			reason: "podman: Error: something odd",
		});
		// The command inside failed (host-agent's own exit): not the engine's business.
		expect(stationFailure("podman", "node: bad option\n", 9)).toBeUndefined();
	});
});
