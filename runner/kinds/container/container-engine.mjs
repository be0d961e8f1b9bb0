// The user's container engine CLI (docker or podman) as a function: run one command, get its output,
// or an EngineError whose code says what went wrong and whose message says how to fix it. Nothing is
// ever passed on the command line that is secret (values of --env come from the engine's environment).
import { spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { RUN_TAG } from "../../store/proc.mjs";

/** The worker image's recipe, shipped with the package (node 22.19 + pi 1.6 + git + bash). */
export const DOCKERFILE = resolve(dirname(fileURLToPath(import.meta.url)), "../../../docker/worker.Dockerfile");

export const ENGINE_TIMEOUT_MS = 120_000;

/**
 * Why an engine command failed. Words for people are in the message; code branches on these.
 * - engine-missing: the CLI is not installed or not on PATH
 * - engine-down: the CLI cannot reach its daemon / service
 * - engine-denied: the CLI may not use its daemon (docker socket permissions)
 * - image-missing: the image is not on the engine's machine (we never pull)
 * - no-container: the container does not exist (any more)
 * - disk-full: no space left on a device the engine or the container writes
 * - engine-failed: anything else; the engine's own last line is quoted
 */
export const ENGINE_CODES = /** @type {const} */ ([
	"engine-missing",
	"engine-down",
	"engine-denied",
	"image-missing",
	"no-container",
	"disk-full",
	"engine-failed",
]);

/** @typedef {(typeof ENGINE_CODES)[number]} EngineCode */

export class EngineError extends Error {
	/**
	 * @param {EngineCode} code @param {string} detail what is wrong
	 * @param {{ fix?: string, said?: string }} [more] how to fix it; the engine's own words
	 */
	constructor(code, detail, more = {}) {
		super(`${detail}${more.fix ? `: ${more.fix}` : ""}${more.said ? ` (${more.said})` : ""}`);
		this.code = code;
		this.detail = detail;
		this.fix = more.fix;
		this.said = more.said;
	}
}

/** Printable text only: an engine's stderr may carry what an image's author or an agent wrote. */
export function plain(/** @type {string} */ text) {
	// eslint-disable-next-line no-control-regex
	const clean = text
		.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g, "")
		.trim();
	return clean.length > 300 ? `${clean.slice(0, 297)}...` : clean;
}

/** The engine's last meaningful stderr line. @param {string} stderr */
function lastLine(stderr) {
	const lines = stderr
		.split("\n")
		.map((l) => l.trim())
		.filter(Boolean);
	return plain(lines.find((l) => /^Error/i.test(l)) ?? lines.at(-1) ?? "");
}

/**
 * Classifies a failed engine command.
 * @param {"docker" | "podman"} engine
 * @param {{ spawnError?: NodeJS.ErrnoException, code?: number | null, stderr?: string, image?: string }} failure
 * @returns {EngineError}
 */
export function engineFailure(engine, { spawnError, code, stderr = "", image }) {
	if (spawnError?.code === "ENOENT") {
		const install =
			engine === "podman"
				? "install podman (apt-get install podman)"
				: "install Docker (https://docs.docker.com/engine/install/)";
		return new EngineError("engine-missing", `${engine} is not installed or not on PATH`, {
			fix: `${install}, or choose the other engine with --container`,
		});
	}
	if (spawnError) return new EngineError("engine-failed", `${engine} could not be run: ${spawnError.message}`);
	const line = lastLine(stderr);
	const said = line ? `${engine}: ${line}` : undefined;
	if (
		/cannot connect to the docker daemon|is the docker daemon running|cannot connect to podman|unable to connect to podman|error during connect/i.test(
			stderr,
		)
	) {
		const fix =
			engine === "docker"
				? "start it (systemctl start docker, or open Docker Desktop)"
				: "start its service (systemctl --user start podman.socket, or podman machine start)";
		return new EngineError("engine-down", `${engine} cannot reach its engine`, { fix, said });
	}
	if (/permission denied.*(docker\.sock|podman\.sock)|got permission denied while trying to connect/i.test(stderr)) {
		return new EngineError("engine-denied", `${engine} may not use its engine socket`, {
			fix: "add your user to the docker group (then log in again), or use rootless podman",
			said,
		});
	}
	if (/image not known|no such image|unable to find image|repository does not exist|manifest unknown/i.test(stderr)) {
		return new EngineError(
			"image-missing",
			`the image ${image ?? ""} is not on ${engine}'s machine (the board never pulls)`.replace("  ", " "),
			{ fix: buildFix(engine, image), said },
		);
	}
	if (/no such container|no container with name or id|no such object/i.test(stderr))
		return new EngineError("no-container", "the container is gone", { said });
	if (/no space left on device/i.test(stderr))
		return new EngineError("disk-full", `no space left on a disk ${engine} writes`, {
			fix: `free some space (${engine} system prune removes unused images and stopped containers)`,
			said,
		});
	return new EngineError(
		"engine-failed",
		`${engine} failed${code === null || code === undefined ? "" : ` (exit ${code})`}`,
		{ said },
	);
}

/** How to get the worker image: the Dockerfile this package ships. @param {string} engine @param {string} [image] */
export function buildFix(engine, image = "<image>") {
	return `build it from the package's Dockerfile: ${engine} build -t ${image} - < ${DOCKERFILE}`;
}

/** The engine's environment: without the run tag of the link that calls it. @param {NodeJS.ProcessEnv} [env] */
export function engineEnv(env = process.env) {
	const out = { ...env };
	delete out[RUN_TAG];
	return out;
}

/**
 * @typedef {object} EngineRunOptions
 * @property {NodeJS.ProcessEnv} [env]   the engine's environment (where -e NAME values come from);
 *   default: ours without the run tag (conmon and friends outlive the call and must not hold a slot)
 * @property {number} [timeoutMs]
 * @property {string} [image]            named in an image-missing message
 * @property {boolean} [okIfGone]        "no such container" counts as success (stop, rm)
 */

/**
 * Runs `<engine> ...args` and resolves with its stdout, or rejects with an EngineError.
 * @param {"docker" | "podman"} engine @param {string[]} args @param {EngineRunOptions} [options]
 * @returns {Promise<{ stdout: string, stderr: string, code: number }>}
 */
export function engineRun(engine, args, options = {}) {
	return new Promise((resolve, reject) => {
		const child = spawn(engine, args, { stdio: ["ignore", "pipe", "pipe"], env: engineEnv(options.env) });
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk));
		child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr = (stderr + chunk).slice(-16_000)));
		const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? ENGINE_TIMEOUT_MS);
		child.on("error", (spawnError) => {
			clearTimeout(timer);
			reject(engineFailure(engine, { spawnError, image: options.image }));
		});
		child.on("close", (code, signal) => {
			clearTimeout(timer);
			if (code === 0) return resolve({ stdout, stderr, code });
			const failure =
				signal === "SIGKILL" && code === null
					? new EngineError(
							"engine-failed",
							`${engine} ${args.find((a) => !a.startsWith("-")) ?? ""} did not answer within ${Math.round((options.timeoutMs ?? ENGINE_TIMEOUT_MS) / 1000)} s`,
						)
					: engineFailure(engine, { code, stderr, image: options.image });
			if (options.okIfGone && failure.code === "no-container") return resolve({ stdout, stderr, code: code ?? 1 });
			reject(failure);
		});
	});
}
