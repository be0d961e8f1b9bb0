// A remote engine's station (engine-remote.mjs says what it is): made when missing and started when
// stopped, our worker-side files copied into it at this version, host-agent.mjs reached in it through
// `<engine> exec -i` (a FarTransport, as ssh is one), and self-contained far programs run in it over
// stdin. Everything that comes back out of the station is untrusted: frames are shape-checked by the
// link, a program's answer is parsed as JSON only.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { FarError, HOST_AGENT } from "../../link/far-client.mjs";
import { PACKAGE_ROOT } from "../../far/package-files.mjs";
import { installPackage } from "../pkg-install.mjs";
import { makePiHome } from "./pi-home.mjs";
import { EngineError, engineEnv, engineRun, plain } from "./container-engine.mjs";
import {
	remoteEngineArgs,
	STATION_DIR,
	stationCopyInArgs,
	stationExecArgs,
	stationFailure,
	stationInspectArgs,
	stationName,
	stationRunArgs,
} from "./engine-remote.mjs";

/**
 * @typedef {import("./container-argv.mjs").ContainerTarget & { engineHost: string }} RemoteTarget
 * @typedef {{ name: string, dir: string, pkgVersion: string, agent: string }} Station
 */

/** @param {RemoteTarget} target @param {string} storeDir @param {string} pkgVersion @returns {Station} */
export function stationOf(target, storeDir, pkgVersion) {
	return {
		name: stationName(storeDir, target.name),
		dir: STATION_DIR,
		pkgVersion,
		agent: `${STATION_DIR}/pkg/${pkgVersion}/runner/far/host-agent.mjs`,
	};
}

/**
 * The station runs when this resolves: started when stopped (the engine's machine rebooted), made when
 * missing (its volume, with every run's files, outlives a removed container). Two links racing make it once.
 * @param {RemoteTarget} target @param {string} storeDir @param {Station} station
 */
export async function ensureStation(target, storeDir, station) {
	const state = async () =>
		(await engineRun(target.engine, stationInspectArgs(target, station.name), { timeoutMs: 60_000 })).stdout.trim();
	let now = await state().catch((error) => {
		if (error instanceof EngineError && error.code === "no-container") return "missing";
		throw error;
	});
	if (now.startsWith("true")) return;
	if (now === "missing") {
		await engineRun(
			target.engine,
			stationRunArgs(target, { name: station.name, storeDir, targetName: target.name }),
			{ image: target.image, timeoutMs: 120_000 },
		).catch((error) => {
			// Another link made it meanwhile.
			if (!/already in use|Conflict/i.test(error instanceof Error ? error.message : "")) throw error;
		});
		now = await state();
	}
	if (!now.startsWith("true"))
		await engineRun(target.engine, [...remoteEngineArgs(target), "start", station.name], { timeoutMs: 120_000 });
}

/**
 * Runs `command` in the station with `input` on its stdin, resolving with its stdout.
 * @param {RemoteTarget} target @param {string} name @param {string[]} command @param {{ input?: string | NodeJS.ReadableStream, timeoutMs?: number }} [options]
 * @returns {Promise<string>}
 */
export function execInStation(target, name, command, options = {}) {
	return new Promise((resolvePromise, reject) => {
		const child = spawn(target.engine, stationExecArgs(target, name, command), {
			stdio: ["pipe", "pipe", "pipe"],
			env: engineEnv(),
		});
		let out = "";
		let stderr = "";
		const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000);
		child.stdout.setEncoding("utf8").on("data", (/** @type {string} */ c) => (out = (out + c).slice(-1_000_000)));
		child.stderr.setEncoding("utf8").on("data", (/** @type {string} */ c) => (stderr = (stderr + c).slice(-8000)));
		child.stdin.on("error", () => undefined);
		if (typeof options.input === "string" || options.input === undefined) child.stdin.end(options.input ?? "");
		else options.input.pipe(child.stdin);
		child.on("error", (error) => {
			clearTimeout(timer);
			reject(new FarError(`${target.engine}: ${error.message}`, "unreachable"));
		});
		child.on("close", (code) => {
			clearTimeout(timer);
			const failure = stationFailure(target.engine, stderr, code);
			if (failure) return reject(new FarError(failure.reason, failure.kind));
			if (code !== 0)
				return reject(
					new FarError(
						`${command[0] ?? "exec"} in the station failed (exit ${code}): ${plain(stderr.trim().split("\n").pop() ?? "")}`,
						"remote",
					),
				);
			resolvePromise(out);
		});
	});
}

/**
 * A tar of `files` under `root`, unpacked at `dest` in the station (made first).
 * @param {RemoteTarget} target @param {string} name @param {string} root @param {string[]} files @param {string} dest
 */
async function copyIn(target, name, root, files, dest) {
	await runInStation(target, name, "far-place.mjs", "makePrivateDir", [dest]);
	await new Promise((resolvePromise, reject) => {
		const tar = spawn("tar", ["-cf", "-", "-C", root, "--", ...files], { stdio: ["ignore", "pipe", "pipe"] });
		const cp = spawn(target.engine, stationCopyInArgs(target, name, dest), {
			stdio: ["pipe", "ignore", "pipe"],
			env: engineEnv(),
		});
		let stderr = "";
		tar.stdout.pipe(cp.stdin);
		cp.stdin.on("error", () => undefined);
		cp.stderr.setEncoding("utf8").on("data", (/** @type {string} */ c) => (stderr = (stderr + c).slice(-8000)));
		tar.on("error", (error) => reject(new Error(`tar: ${error.message}`)));
		cp.on("error", (error) => reject(new FarError(`${target.engine}: ${error.message}`, "unreachable")));
		cp.on("close", (code) => {
			const failure = stationFailure(target.engine, stderr, code);
			if (failure) return reject(new FarError(failure.reason, failure.kind));
			if (code !== 0)
				return reject(
					new FarError(
						`${target.engine} cp into the station failed (exit ${code}): ${plain(stderr.trim().split("\n").pop() ?? "")}`,
						"remote",
					),
				);
			resolvePromise(undefined);
		});
	});
}

/**
 * Our worker-side files into `<dir>/pkg/<version>/` of the station (made or started first), as every far
 * side gets them (kinds/pkg-install.mjs), through the engine's cp and exec.
 * @param {RemoteTarget} target @param {string} storeDir @param {Station} station @param {{ root?: string }} [options]
 */
export async function installIntoStation(target, storeDir, station, options = {}) {
	await ensureStation(target, storeDir, station);
	return installPackage(
		{
			program: (file, fn, args) => runInStation(target, station.name, file, fn, args),
			copyIn: (root, files, dest) => copyIn(target, station.name, root, files, dest),
		},
		{ dir: station.dir, version: station.pkgVersion, root: options.root ?? PACKAGE_ROOT },
	);
}

/**
 * host-agent in the station: `<engine> exec -i <station> node <dir>/pkg/<version>/runner/far/host-agent.mjs <verb> <args>`.
 * @param {RemoteTarget} target @param {Station} station
 * @returns {import("../../link/far-client.mjs").FarTransport}
 */
export function stationTransport(target, station) {
	return {
		name: `${target.name} (${target.engine} on ${target.engineHost})`,
		spawn: (verb, args) =>
			spawn(target.engine, stationExecArgs(target, station.name, ["node", station.agent, verb, ...args]), {
				stdio: ["pipe", "pipe", "pipe"],
				env: engineEnv(),
			}),
		failure: (stderr, code) => stationFailure(target.engine, stderr, code),
	};
}

/**
 * Runs `<fn>(...args)` of a self-contained runner/far/ file (node:* imports only) in the station: its
 * source and the call go to node's stdin, so it needs none of our files there. Resolves with what it returned.
 * @param {RemoteTarget} target @param {string} name @param {string} file @param {string} fn @param {unknown[]} args
 */
export async function runInStation(target, name, file, fn, args) {
	const source = readFileSync(join(dirname(HOST_AGENT), file), "utf8");
	const out = await execInStation(target, name, ["node", "--input-type=module", "-"], {
		input: `${source}\nprocess.stdout.write(JSON.stringify(await ${fn}(...${JSON.stringify(args)})));\n`,
	});
	try {
		return /** @type {unknown} */ (JSON.parse(out));
	} catch {
		throw new FarError(`${file} in the station answered no JSON: ${plain(out.slice(0, 200))}`, "remote");
	}
}

/** Where a row's pi home is in the station. @param {Station} station @param {string} rowId */
export const stationPiHome = (station, rowId) => `${station.dir}/homes/${rowId}`;

/**
 * The row's pi home (pi-home.mjs: only its provider's models, settings and credentials) into the
 * station, as a tar through `cp`: never on a command line. Replaces the row's previous one.
 * @param {RemoteTarget} target @param {Station} station @param {{ agentDir: string, rowId: string, model?: string }} run
 */
export async function sendPiHome(target, station, run) {
	const local = mkdtempSync(join(tmpdir(), "pab-pi-home-"));
	try {
		const { files } = makePiHome({ agentDir: run.agentDir, dest: local, model: run.model });
		const dest = stationPiHome(station, run.rowId);
		await runInStation(target, station.name, "far-place.mjs", "removeTree", [dest]);
		await copyIn(target, station.name, local, files.length ? files : ["."], dest);
		return dest;
	} finally {
		rmSync(local, { recursive: true, force: true });
	}
}
