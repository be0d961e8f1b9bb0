// A container target's engine command lines (docker or podman CLI, the user's own). One container
// per run, `ab-<runId>`, labelled with the store, row and run, removed when it ends; hardened by
// default; only the run's dirs, its pi home, the workspace and our worker-side files (read-only) go
// in. --env names are passed as `-e NAME`: the engine reads each value from its own environment, so
// no value is ever on a command line.
import { randomBytes } from "node:crypto";
import { CONTAINER_RUN_DIR, CONTAINER_SESSION_DIR } from "../../store/store-layout.mjs";
import { ENV_NAME } from "../kind.mjs";
import { RUN_TAG, runTag } from "../../store/proc.mjs";

/** The container engines a target may name (their own CLIs). */
export const CONTAINER_ENGINES = /** @type {const} */ (["docker", "podman"]);

/**
 * A container target's snapshot (container-kind.mjs states its fields).
 * @typedef {import("../kind.mjs").TargetSnapshot & { engine: (typeof CONTAINER_ENGINES)[number], image: string, engineHost?: string, engineIdentity?: string, network?: string, cpus?: number, memory?: string }} ContainerTarget
 */

export const LABEL_STORE = "agent-board.store";
export const LABEL_ROW = "agent-board.row";
export const LABEL_RUN = "agent-board.run";
export const DEFAULT_PIDS_LIMIT = 512;

/** Where things are inside the container. */
export const IN = {
	runner: "/ab/pkg/runner",
	src: "/ab/pkg/src",
	skills: "/ab/pkg/skills",
	pkgJson: "/ab/pkg/package.json",
	run: CONTAINER_RUN_DIR,
	session: CONTAINER_SESSION_DIR,
	pi: "/ab/pi",
	workspace: "/workspace",
	home: "/tmp",
};

/** @param {string} runId */
export const containerName = (runId) => `ab-${runId}`;

/**
 * @typedef {object} ContainerPlan
 * @property {"docker" | "podman"} engine
 * @property {string} [engineHost]   the CLI's own remote flag value (docker -H, podman --url)
 * @property {string} image
 * @property {string} [network]
 * @property {number} [cpus]
 * @property {string} [memory]
 * @property {string[]} env          --env NAMEs (values come from the engine's environment)
 * @property {string} storeDir
 * @property {string} rowId
 * @property {string} runId
 * @property {{ pkg: string, run: string, session: string, piHome: string, workspace: string, objects?: string, cache?: string }} mounts
 *   host paths; `objects`: the user's repository objects the workspace borrows (mounted read-only at
 *   the same path); `cache`: the prepared start cache for this image and package (read-only)
 * @property {number} uid
 * @property {number} gid
 * @property {number} [pidsLimit]
 * @property {string[]} [command]     instead of the runner (tests, probes)
 */

/** @param {string} path */
function checkMountSource(path) {
	if (!path.startsWith("/")) throw new Error(`mount source must be absolute: ${path}`);
	// -v splits on ":"; a newline or comma has no business in a path we mount.
	if (/[:,\n\r\0]/.test(path))
		throw new Error(`cannot mount a path containing ":", "," or a newline: ${JSON.stringify(path)}`);
	return path;
}

/** @param {string} source @param {string} target @param {boolean} [readOnly] */
function volume(source, target, readOnly = false) {
	return ["-v", `${checkMountSource(source)}:${target}${readOnly ? ":ro" : ""}`];
}

/** Flags that come before the subcommand (remote engine). @param {ContainerPlan["engine"]} engine @param {string} [engineHost] */
export function engineGlobalArgs(engine, engineHost) {
	if (!engineHost) return [];
	return engine === "docker" ? ["-H", engineHost] : ["--remote", "--url", engineHost];
}

/** Where the prepared start cache (container-cache.mjs) is mounted, read-only. */
export const CACHE_IN = "/ab/cache";
/** The container's command: our entry (copies the start cache into the tmpfs), then the runner. */
export const ENTRY = `${IN.runner}/kinds/container/container-entry.mjs`;
/** Left in the run dir by the entry when the runner exited: the last snapshot, taken inside. */
export const FINAL_SNAPSHOT = "final-snapshot.json";
/** Runs inside a container: git work in /workspace (the wip snapshot, a follow-up run's sync). */
export const GIT_INSIDE = `${IN.runner}/kinds/container/container-git.mjs`;

/**
 * The hardening every container of ours gets (a run's, a snapshot's, a check's): all capabilities
 * dropped, no new privileges, read-only root with a tmpfs /tmp, a pids limit, the user's uid, images
 * only from the engine's machine (the board never pulls).
 * @param {Pick<ContainerPlan, "engine" | "uid" | "gid" | "pidsLimit" | "network" | "cpus" | "memory">} plan
 */
function hardening(plan) {
	// Rootless podman maps the user to root inside unless asked to keep the id: files written to the
	// worktree must belong to the user.
	const rootless = plan.engine === "podman" && plan.uid !== 0;
	return [
		"--pull=never",
		"--cap-drop=ALL",
		"--security-opt=no-new-privileges",
		"--read-only",
		"--tmpfs",
		`${IN.home}:rw,exec,nosuid,nodev`,
		"--pids-limit",
		String(plan.pidsLimit ?? DEFAULT_PIDS_LIMIT),
		...(rootless ? ["--userns=keep-id"] : []),
		"--user",
		`${plan.uid}:${plan.gid}`,
		...(plan.network ? ["--network", plan.network] : []),
		...(plan.cpus !== undefined ? ["--cpus", String(plan.cpus)] : []),
		...(plan.memory ? ["--memory", plan.memory] : []),
	];
}

/** @param {string} root the package root on this machine */
function packageMounts(root) {
	return [
		...volume(`${root}/runner`, IN.runner, true),
		...volume(`${root}/src`, IN.src, true),
		...volume(`${root}/skills`, IN.skills, true),
		...volume(`${root}/package.json`, IN.pkgJson, true),
	];
}

/** @param {ContainerPlan} plan */
function checkEnvNames(plan) {
	for (const name of plan.env)
		if (!ENV_NAME.test(name)) throw new Error(`not an environment variable name: ${JSON.stringify(name)}`);
}

/**
 * argv (after the engine binary) that starts one run's container, detached.
 * @param {ContainerPlan} plan
 */
export function containerRunArgs(plan) {
	checkEnvNames(plan);
	return [
		...engineGlobalArgs(plan.engine, plan.engineHost),
		"run",
		"-d",
		"--rm",
		"--init",
		"--name",
		containerName(plan.runId),
		"--label",
		`${LABEL_STORE}=${plan.storeDir}`,
		"--label",
		`${LABEL_ROW}=${plan.rowId}`,
		"--label",
		`${LABEL_RUN}=${plan.runId}`,
		...hardening(plan),
		...packageMounts(plan.mounts.pkg),
		...volume(plan.mounts.run, IN.run),
		...volume(plan.mounts.session, IN.session),
		...volume(plan.mounts.piHome, IN.pi),
		...volume(plan.mounts.workspace, IN.workspace),
		...(plan.mounts.objects ? volume(plan.mounts.objects, plan.mounts.objects, true) : []),
		...(plan.mounts.cache ? volume(plan.mounts.cache, CACHE_IN, true) : []),
		"-e",
		`HOME=${IN.home}`,
		"-e",
		`PI_CODING_AGENT_DIR=${IN.pi}`,
		// The far side's tag: the link (and any end on this machine) carries the run's id, not this.
		"-e",
		`${RUN_TAG}=${runTag(plan.runId, "container")}`,
		// Node reads a compile cache it cannot write to (pi enables it); jiti's is copied by the entry.
		...(plan.mounts.cache ? ["-e", `NODE_COMPILE_CACHE=${CACHE_IN}/node`] : []),
		...plan.env.flatMap((name) => ["-e", name]),
		"-w",
		IN.workspace,
		// Options end here: an image named like an option (targets add refuses one) is still an image.
		"--",
		plan.image,
		...(plan.command ?? ["node", ENTRY, `${IN.run}/run.json`, `${IN.run}/slot.json`]),
	];
}

/**
 * A one-shot container with the same hardening, no network (unless `network` says otherwise; "" is
 * the engine's default), our package and only the mounts given:
 * the snapshot after a run ended (workspace + its objects), the image check, the cache warm-up.
 * It carries the store's label (reconcile finds it if its caller dies) but no run label.
 * @param {Pick<ContainerPlan, "engine" | "engineHost" | "image" | "uid" | "gid" | "storeDir"> & { pkg: string, network?: string }} plan
 *   `pkg`: the package root on this machine
 * @param {{ purpose: "git" | "cache" | "check", volumes: [source: string, target: string, readOnly?: boolean][], env?: string[], command: string[], workdir?: string }} what
 */
export function containerOneShotArgs(plan, what) {
	return [
		...engineGlobalArgs(plan.engine, plan.engineHost),
		"run",
		"--rm",
		"--init",
		// Named for what it does (ab-<purpose>-<random>), so a person listing containers can tell.
		"--name",
		`ab-${what.purpose}-${randomBytes(4).toString("hex")}`,
		...(plan.storeDir ? ["--label", `${LABEL_STORE}=${plan.storeDir}`] : []),
		...hardening({ ...plan, network: plan.network ?? "none" }),
		...packageMounts(plan.pkg),
		...what.volumes.flatMap(([source, target, readOnly]) => volume(source, target, readOnly)),
		"-e",
		`HOME=${IN.home}`,
		...(what.env ?? []).flatMap((pair) => ["-e", pair]),
		"-w",
		what.workdir ?? IN.home,
		"--",
		plan.image,
		...what.command,
	];
}

/**
 * Snapshot of a running run's workspace, inside its own container (the agent's .git config, hooks
 * and filters run there, never here). Prints one JSON line { head, wip, tree }.
 * @param {ContainerPlan["engine"]} engine @param {string | undefined} engineHost @param {string} runId @param {string} rowId
 */
export function containerSnapshotExecArgs(engine, engineHost, runId, rowId) {
	return [
		...engineGlobalArgs(engine, engineHost),
		"exec",
		"-w",
		IN.workspace,
		containerName(runId),
		"node",
		GIT_INSIDE,
		"snapshot",
		rowId,
	];
}

/** Stop, then kill: `stop -t <grace>` ends it politely, `rm -f` whatever is left (and the container). */
export function containerStopArgs(
	/** @type {ContainerPlan["engine"]} */ engine,
	/** @type {string | undefined} */ engineHost,
	/** @type {string} */ runId,
	graceS = 10,
) {
	return {
		stop: [...engineGlobalArgs(engine, engineHost), "stop", "-t", String(graceS), containerName(runId)],
		remove: [...engineGlobalArgs(engine, engineHost), "rm", "-f", containerName(runId)],
	};
}

/** Names of this store's containers (running or not). @param {ContainerPlan["engine"]} engine @param {string | undefined} engineHost @param {string} storeDir */
export function containerListArgs(engine, engineHost, storeDir) {
	return [
		...engineGlobalArgs(engine, engineHost),
		"ps",
		"-a",
		"--filter",
		`label=${LABEL_STORE}=${storeDir}`,
		"--format",
		"{{.Names}}",
	];
}

/** Labels of named containers, one JSON object per line. @param {ContainerPlan["engine"]} engine @param {string | undefined} engineHost @param {string[]} names */
export function containerLabelsArgs(engine, engineHost, names) {
	return [...engineGlobalArgs(engine, engineHost), "inspect", "--format", "{{json .Config.Labels}}", ...names];
}

/**
 * Reconcile: which of a store's containers no row owns any more (run ended, or row gone).
 * @param {{ name: string, labels: Record<string, string> }[]} containers
 * @param {(rowId: string, runId: string) => boolean} runIsLive
 */
export function orphanContainers(containers, runIsLive) {
	return containers
		.filter(({ name, labels }) => {
			const runId = labels[LABEL_RUN];
			const rowId = labels[LABEL_ROW];
			if (!runId || !rowId || name !== containerName(runId)) return false;
			return !runIsLive(rowId, runId);
		})
		.map(({ name }) => name);
}
