/** Pure parts of container targets: engine argv, failures as reasons, check lines, the pi home, the start cache's key. */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
	containerLabelsArgs,
	containerListArgs,
	containerOneShotArgs,
	containerRunArgs,
	containerSnapshotExecArgs,
	containerStopArgs,
	orphanContainers,
} from "../runner/kinds/container/container-argv.mjs";
import { cacheKey } from "../runner/kinds/container/container-cache.mjs";
import { containerCheckItems } from "../runner/kinds/container/container-check.mjs";
import { engineFailure } from "../runner/kinds/container/container-engine.mjs";
import { endReason } from "../runner/kinds/container/container-transport.mjs";
import { makePiHome, providerBaseUrl, rowProvider } from "../runner/kinds/container/pi-home.mjs";

const temps: string[] = [];
const temp = (): string => {
	const dir = mkdtempSync(join(tmpdir(), "pab-ctu-"));
	temps.push(dir);
	return dir;
};
afterEach(() => {
	for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

describe("container argv", () => {
	const plan = {
		engine: "podman" as const,
		image: "pab-worker:1",
		network: "host",
		cpus: 2,
		memory: "2g",
		env: ["ANTHROPIC_API_KEY"],
		storeDir: "/home/u/.pi/agent/agent-board",
		rowId: "row1",
		runId: "run1",
		mounts: {
			pkg: "/pkg",
			run: "/s/targets/c/runs/run1",
			session: "/s/targets/c/sessions/row1",
			piHome: "/s/targets/c/pi/run1",
			workspace: "/s/targets/c/work/row 1",
		},
		uid: 1000,
		gid: 1000,
	};

	it("runs one hardened, labelled, self-removing container whose env values never reach argv", () => {
		const argv = containerRunArgs(plan);
		expect(argv.slice(0, 6)).toEqual(["run", "-d", "--rm", "--init", "--name", "ab-run1"]);
		for (const flag of ["--cap-drop=ALL", "--security-opt=no-new-privileges", "--read-only", "--userns=keep-id"])
			expect(argv).toContain(flag);
		const pairs = (flag: string): string[] => argv.flatMap((word, i) => (word === flag ? [argv[i + 1] ?? ""] : []));
		expect(pairs("--label")).toEqual([
			"agent-board.store=/home/u/.pi/agent/agent-board",
			"agent-board.row=row1",
			"agent-board.run=run1",
		]);
		expect(pairs("--tmpfs")).toEqual(["/tmp:rw,exec,nosuid,nodev"]);
		expect(pairs("--user")).toEqual(["1000:1000"]);
		expect(pairs("--pids-limit")).toEqual(["512"]);
		expect([pairs("--network"), pairs("--cpus"), pairs("--memory")]).toEqual([["host"], ["2"], ["2g"]]);
		expect(pairs("-v")).toEqual([
			"/pkg/runner:/ab/pkg/runner:ro",
			"/pkg/src:/ab/pkg/src:ro",
			"/pkg/skills:/ab/pkg/skills:ro",
			"/pkg/package.json:/ab/pkg/package.json:ro",
			"/s/targets/c/runs/run1:/ab/run",
			"/s/targets/c/sessions/row1:/ab/session",
			"/s/targets/c/pi/run1:/ab/pi",
			"/s/targets/c/work/row 1:/workspace",
		]);
		expect(pairs("-e")).toEqual([
			"HOME=/tmp",
			"PI_CODING_AGENT_DIR=/ab/pi",
			"AGENT_BOARD_RUN_ID=run1@far",
			"ANTHROPIC_API_KEY",
		]);
		expect(argv).toContain("--pull=never");
		expect(argv.slice(-5)).toEqual([
			"pab-worker:1",
			"node",
			"/ab/pkg/runner/kinds/container/container-entry.mjs",
			"/ab/run/run.json",
			"/ab/run/slot.json",
		]);
		// The start cache: read-only, node reads its compile cache in place.
		const cached = containerRunArgs({ ...plan, mounts: { ...plan.mounts, cache: "/s/targets/c/cache/k1" } });
		expect(cached).toContain("/s/targets/c/cache/k1:/ab/cache:ro");
		expect(cached).toContain("NODE_COMPILE_CACHE=/ab/cache/node");
		expect(
			containerRunArgs({ ...plan, engine: "docker", engineHost: "ssh://me@box", uid: 0, gid: 0 }).slice(0, 3),
		).toEqual(["-H", "ssh://me@box", "run"]);
		expect(containerRunArgs({ ...plan, uid: 0, gid: 0 })).not.toContain("--userns=keep-id");
	});

	it("refuses mount paths the -v syntax would split and names that are not variables", () => {
		expect(() => containerRunArgs({ ...plan, mounts: { ...plan.mounts, workspace: "/w/a:b" } })).toThrow(
			/cannot mount a path containing/,
		);
		expect(() => containerRunArgs({ ...plan, mounts: { ...plan.mounts, workspace: "relative" } })).toThrow(
			/absolute/,
		);
		expect(() => containerRunArgs({ ...plan, env: ["A=secret"] })).toThrow(/not an environment variable name/);
	});

	it("stops, lists and reconciles by label", () => {
		expect(containerStopArgs("podman", undefined, "run1", 5)).toEqual({
			stop: ["stop", "-t", "5", "ab-run1"],
			remove: ["rm", "-f", "ab-run1"],
		});
		expect(containerListArgs("podman", "ssh://b", "/s")).toEqual([
			"--remote",
			"--url",
			"ssh://b",
			"ps",
			"-a",
			"--filter",
			"label=agent-board.store=/s",
			"--format",
			"{{.Names}}",
		]);
		expect(containerLabelsArgs("docker", undefined, ["ab-1"])).toEqual([
			"inspect",
			"--format",
			"{{json .Config.Labels}}",
			"ab-1",
		]);
		const labels = (row: string, run: string): Record<string, string> => ({
			"agent-board.row": row,
			"agent-board.run": run,
		});
		const containers = [
			{ name: "ab-live", labels: labels("r1", "live") },
			{ name: "ab-done", labels: labels("r1", "done") },
			{ name: "ab-gone", labels: labels("r2", "gone") },
			{ name: "someone-else", labels: labels("r3", "x") },
		];
		expect(orphanContainers(containers, (_row, run) => run === "live")).toEqual(["ab-done", "ab-gone"]);
	});
});

describe("pi home for a container run", () => {
	it("holds models.json, settings.json and only the row's provider's credentials", () => {
		const agentDir = temp();
		const dest = join(temp(), "pi");
		writeFileSync(
			join(agentDir, "auth.json"),
			JSON.stringify({ anthropic: { type: "api_key", key: "SK-ANT" }, openai: { type: "api_key", key: "SK-OAI" } }),
		);
		writeFileSync(
			join(agentDir, "models.json"),
			JSON.stringify({
				providers: { anthropic: { baseUrl: "https://a" }, mine: { apiKey: "SK-MINE", baseUrl: "http://m" } },
			}),
		);
		writeFileSync(
			join(agentDir, "settings.json"),
			JSON.stringify({
				defaultProvider: "openai",
				packages: ["npm:x"],
				extensions: ["/home/u/ext.ts"],
				retry: { enabled: false },
			}),
		);
		expect(makePiHome({ agentDir, dest, model: "anthropic/claude-x" })).toEqual({
			provider: "anthropic",
			files: ["settings.json", "models.json", "auth.json"],
		});
		expect(JSON.parse(readFileSync(join(dest, "auth.json"), "utf8"))).toEqual({
			anthropic: { type: "api_key", key: "SK-ANT" },
		});
		expect(JSON.parse(readFileSync(join(dest, "models.json"), "utf8"))).toEqual({
			providers: { anthropic: { baseUrl: "https://a" } },
		});
		expect(JSON.parse(readFileSync(join(dest, "settings.json"), "utf8"))).toEqual({
			defaultProvider: "openai",
			retry: { enabled: false },
		});
		expect(statSync(dest).mode & 0o777).toBe(0o700);
		expect(statSync(join(dest, "auth.json")).mode & 0o777).toBe(0o600);
		expect(rowProvider(undefined, { defaultProvider: "openai" })).toBe("openai");
		expect(providerBaseUrl({ agentDir, model: "mine/m1" })).toEqual({ provider: "mine", baseUrl: "http://m" });
		expect(providerBaseUrl({ agentDir })).toEqual({ provider: "openai", baseUrl: undefined });
		writeFileSync(join(agentDir, "auth.json"), "{ torn");
		expect(() => makePiHome({ agentDir, dest, model: "anthropic/x" })).toThrow(
			`${join(agentDir, "auth.json")}: invalid JSON`,
		);
	});
});

describe("container one-shots", () => {
	it("share the run's hardening, have no network unless asked, and carry no run label", () => {
		const argv = containerOneShotArgs(
			{ engine: "podman", image: "img:1", storeDir: "/s", pkg: "/pkg", uid: 1000, gid: 1000 },
			{
				purpose: "git",
				volumes: [
					["/w/row 1", "/workspace"],
					["/r/.git/objects", "/r/.git/objects", true],
				],
				command: ["node", "x.mjs"],
				workdir: "/workspace",
			},
		);
		for (const flag of [
			"--rm",
			"--init",
			"--pull=never",
			"--cap-drop=ALL",
			"--security-opt=no-new-privileges",
			"--read-only",
			"--userns=keep-id",
		])
			expect(argv).toContain(flag);
		expect(argv.join(" ")).toContain("--network none");
		expect(argv.join(" ")).toContain("--label agent-board.store=/s");
		expect(argv.join(" ")).not.toContain("agent-board.run");
		expect(argv).toContain("/r/.git/objects:/r/.git/objects:ro");
		expect(argv.slice(-3)).toEqual(["img:1", "node", "x.mjs"]);
		expect(argv[argv.indexOf("--name") + 1]).toMatch(/^ab-git-[0-9a-f]{8}$/);
		const probe = containerOneShotArgs(
			{ engine: "docker", image: "img:1", storeDir: "", pkg: "/pkg", uid: 0, gid: 0, network: "" },
			{ purpose: "check", volumes: [], command: ["true"] },
		);
		expect(probe).not.toContain("--network");
		expect(probe).not.toContain("--label");
		expect(containerSnapshotExecArgs("podman", undefined, "run1", "row1")).toEqual([
			"exec",
			"-w",
			"/workspace",
			"ab-run1",
			"node",
			"/ab/pkg/runner/kinds/container/container-git.mjs",
			"snapshot",
			"row1",
		]);
	});
});

describe("engine failures", () => {
	it("say what is wrong and how to fix it, with the engine's own words", () => {
		const gone = Object.assign(new Error("spawn docker ENOENT"), { code: "ENOENT" });
		expect(engineFailure("docker", { spawnError: gone })).toMatchObject({
			code: "engine-missing",
			message: expect.stringMatching(/^docker is not installed or not on PATH: install Docker/),
		});
		const down = engineFailure("docker", {
			code: 1,
			stderr: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n",
		});
		expect(down).toMatchObject({
			code: "engine-down",
			detail: "docker cannot reach its engine",
			fix: expect.stringContaining("systemctl start docker"),
		});
		expect(down.message).toContain("(docker: Cannot connect to the Docker daemon");
		expect(
			engineFailure("docker", {
				code: 1,
				stderr:
					"permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock",
			}),
		).toMatchObject({ code: "engine-denied" });
		expect(
			engineFailure("podman", {
				code: 125,
				stderr: "Error: localhost/x:1: image not known\n",
				image: "localhost/x:1",
			}),
		).toMatchObject({
			code: "image-missing",
			detail: "the image localhost/x:1 is not on podman's machine (the board never pulls)",
			fix: expect.stringMatching(
				/^build it from the package's Dockerfile: podman build -t localhost\/x:1 - < \/.*\/docker\/worker\.Dockerfile$/,
			),
		});
		expect(
			engineFailure("docker", {
				code: 125,
				stderr: "Unable to find image 'x:1' locally\ndocker: Error response from daemon: No such image: x:1.",
				image: "x:1",
			}),
		).toMatchObject({ code: "image-missing" });
		expect(
			engineFailure("podman", {
				code: 125,
				stderr: 'Error: no container with name or ID "ab-x" found: no such container',
			}),
		).toMatchObject({ code: "no-container" });
		expect(
			engineFailure("podman", { code: 125, stderr: "Error: writing blob: no space left on device" }),
		).toMatchObject({ code: "disk-full", fix: expect.stringContaining("podman system prune") });
		// An engine's words may carry what an image's author wrote: no escapes reach a terminal.
		expect(engineFailure("podman", { code: 1, stderr: "Error: bad \u001b]0;title\u0007 thing\u202e" }).message).toBe(
			"podman failed (exit 1) (podman: Error: bad ]0;title thing)",
		);
	});

	it("a container's exit says how it ended", () => {
		const target = {
			kind: "container" as const,
			name: "c",
			engine: "podman" as const,
			image: "i",
			env: [],
			max: 1,
			memory: "1g",
		};
		expect(endReason(137, target)).toBe(
			"its container was killed (exit 137: killed from outside, or out of memory with --memory 1g)",
		);
		expect(endReason(null, target)).toMatch(/is gone/);
		expect(endReason(3, target)).toMatch(/exited with code 3/);
	});
});

describe("targets check lines", () => {
	const report = {
		node: "v22.19.0",
		pi: { version: "1.6.0" },
		bash: { version: "5.2.15" },
		git: { version: "2.39.5" },
	};
	const engine = { version: "4.3.1", runtime: "runc" };
	const image = { id: "sha256:0123456789abcdef0123" };
	const line = (items: { name: string; ok: boolean; detail: string; fix?: string }[], name: string): string => {
		const item = items.find((i) => i.name === name);
		return item ? `${item.ok ? "ok" : "FAIL"} ${item.detail}${item.fix ? ` -> ${item.fix}` : ""}` : "(none)";
	};

	it("one line per requirement, ok or what is wrong and how to fix it", () => {
		const target = { engine: "podman" as const, image: "w:1", network: "host" };
		const all = containerCheckItems(target, {
			engine,
			image,
			probe: { report: { ...report, network: { reachable: true, detail: "HTTP 404" } } },
			provider: { provider: "p", baseUrl: "http://127.0.0.1:9/v1" },
			cache: { ms: 4300, prepared: true },
		});
		expect(all.map((i) => `${i.ok ? "ok" : "FAIL"} ${i.name}: ${i.detail}`)).toEqual([
			"ok engine: podman 4.3.1 (runtime runc)",
			"ok image: w:1 (0123456789ab)",
			"ok node: node v22.19.0",
			"ok pi: pi 1.6.0",
			"ok bash: bash 5.2.15",
			"ok git: git 2.39.5",
			"ok network: http://127.0.0.1:9/v1 answers from --network host (HTTP 404)",
			"ok start cache: prepared in 4.3 s",
		]);
		const old = containerCheckItems(target, {
			engine,
			image,
			probe: { report: { ...report, node: "v20.11.0", pi: { version: "1.5.2" } } },
		});
		expect(line(old, "node")).toMatch(
			/^FAIL node v20\.11\.0 in w:1 is too old \(needs >= 22\.19\) -> an image with node >= 22\.19, pi 1\.6, bash and git: build it from the package's Dockerfile: podman build -t w:1 - < /,
		);
		expect(line(old, "pi")).toMatch(/^FAIL pi 1\.5\.2 in w:1 \(needs 1\.6\.x\)/);
		// podman's own words when the image has no node at all.
		const noNode = containerCheckItems(target, {
			engine,
			image,
			probe: {
				error: {
					code: "engine-failed",
					detail: "podman failed (exit 127)",
					said: 'podman: Error: runc: runc create failed: unable to start container process: exec: "node": executable file not found in $PATH',
				},
			},
		});
		expect(noNode.map((i) => `${i.ok ? "ok" : "FAIL"} ${i.name}: ${i.detail}`).slice(2)).toEqual([
			"FAIL node: node is not in w:1",
			"FAIL pi, bash, git: not checked (the check runs on the image's node)",
		]);
		// The engine's own helpers missing (a PATH without /usr/sbin): the engine's words, and the image is not blamed.
		for (const [missing, words] of [
			[
				"iptables",
				'podman: Error: plugin type="bridge" failed (add): cni plugin bridge failed: failed to locate iptables: exec: "iptables": executable file not found in $PATH',
			],
			["netavark", "podman: Error: netavark: No such file or directory (os error 2)"],
		]) {
			const engineFailed = containerCheckItems(target, {
				engine,
				image,
				probe: { error: { code: "engine-failed", detail: "podman failed (exit 127)", said: words } },
			});
			expect(engineFailed[2]).toEqual({
				name: "container",
				ok: false,
				detail: `podman could not start a container of w:1: podman failed (exit 127) (${words})`,
				fix: `podman runs ${missing} itself and could not find it: put the directory that holds it on PATH (for root, /usr/sbin and /sbin), or install it`,
			});
			expect(engineFailed.some((i) => i.name === "node")).toBe(false);
		}
	});

	it("says when the model provider cannot be reached from the target's network, and why", () => {
		const facts = (network: string | undefined, baseUrl: string | undefined, reachable = false) =>
			containerCheckItems(
				{ engine: "docker", image: "w:1", network },
				{
					engine,
					image,
					probe: {
						report: {
							...report,
							network: baseUrl
								? {
										reachable,
										detail: reachable ? "HTTP 401" : "ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:8080)",
									}
								: undefined,
						},
					},
					provider: { provider: "p", baseUrl },
				},
			);
		expect(line(facts("none", "https://api.example.com"), "network")).toBe(
			"FAIL the model provider https://api.example.com cannot be reached from --network none: ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:8080) -> --network none has no network at all: drop --network (the engine's default) or use --network host",
		);
		expect(line(facts(undefined, "http://localhost:8080/v1"), "network")).toMatch(
			/cannot be reached from the engine's default network: .* -> the provider listens on this machine's loopback, which a container's own network cannot see: use --network host$/,
		);
		expect(line(facts("bridge", "https://api.example.com"), "network")).toMatch(
			/-> choose a --network from which https:\/\/api\.example\.com answers/,
		);
		expect(line(facts(undefined, "https://api.example.com", true), "network")).toBe(
			"ok https://api.example.com answers from the engine's default network (HTTP 401)",
		);
		expect(
			line(
				containerCheckItems({ engine: "docker", image: "w:1" }, { engine, image, probe: { report }, provider: {} }),
				"network",
			),
		).toBe("ok not checked: no model provider is configured (settings.json defaultProvider)");
	});

	it("sends a remote engine to its station with the reason, and stops at the first missing piece", () => {
		expect(containerCheckItems({ engine: "docker", image: "w:1", engineHost: "ssh://me@box" }, {})).toEqual([
			{
				name: "engine host",
				ok: false,
				detail: expect.stringContaining(
					"ssh://me@box: a remote engine (--engine-host) cannot mount this machine's run dirs",
				),
				fix: expect.stringContaining("goes through the station"),
			},
		]);
		const down = containerCheckItems(
			{ engine: "docker", image: "w:1" },
			{
				engine: {
					error: {
						code: "engine-down",
						detail: "docker cannot reach its engine",
						fix: "start it",
						said: "docker: Cannot connect",
					},
				},
			},
		);
		expect(down).toEqual([
			{
				name: "engine",
				ok: false,
				detail: "docker cannot reach its engine (docker: Cannot connect)",
				fix: "start it",
			},
		]);
	});
});

describe("start cache", () => {
	it("is named by image and package version", () => {
		expect(cacheKey("w:1", "0.1.0-abc")).toMatch(/^[0-9a-f]{16}$/);
		expect(cacheKey("w:1", "0.1.0-abc")).toBe(cacheKey("w:1", "0.1.0-abc"));
		expect(cacheKey("w:2", "0.1.0-abc")).not.toBe(cacheKey("w:1", "0.1.0-abc"));
		expect(cacheKey("w:1", "0.1.0-abd")).not.toBe(cacheKey("w:1", "0.1.0-abc"));
	});
});
