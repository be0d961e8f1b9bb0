// A container target's engine command lines (docker or podman CLI, the user's own). One container
// per run, `ab-<runId>`, labelled with the store, row and run, removed when it ends; hardened by
// default; only the run's dirs, its pi home, the workspace and our worker-side files (read-only) go
// in. --env names are passed as `-e NAME`: the engine reads each value from its own environment, so
// no value is ever on a command line.

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
	run: "/ab/run",
	session: "/ab/session",
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
 * @property {{ pkg: string, run: string, session: string, piHome: string, workspace: string, objects?: string }} mounts
 *   host paths; `objects`: the user's repository objects the workspace borrows (mounted read-only at the same path)
 * @property {number} uid
 * @property {number} gid
 * @property {number} [pidsLimit]
 */

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** @param {string} path */
function checkMountSource(path) {
	if (!path.startsWith("/")) throw new Error(`mount source must be absolute: ${path}`);
	// -v splits on ":"; a newline or comma has no business in a path we mount.
	if (/[:,\n\r\0]/.test(path)) throw new Error(`cannot mount a path containing ":", "," or a newline: ${JSON.stringify(path)}`);
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

/**
 * argv (after the engine binary) that starts one run's container, detached.
 * @param {ContainerPlan} plan
 */
export function containerRunArgs(plan) {
	for (const name of plan.env) if (!ENV_NAME.test(name)) throw new Error(`not an environment variable name: ${JSON.stringify(name)}`);
	// Rootless podman maps the user to root inside unless asked to keep the id: files written to the
	// worktree must belong to the user.
	const rootless = plan.engine === "podman" && plan.uid !== 0;
	return [
		...engineGlobalArgs(plan.engine, plan.engineHost),
		"run",
		"-d",
		"--rm",
		"--init",
		"--name", containerName(plan.runId),
		"--label", `${LABEL_STORE}=${plan.storeDir}`,
		"--label", `${LABEL_ROW}=${plan.rowId}`,
		"--label", `${LABEL_RUN}=${plan.runId}`,
		"--cap-drop=ALL",
		"--security-opt=no-new-privileges",
		"--read-only",
		"--tmpfs", `${IN.home}:rw,exec,nosuid,nodev`,
		"--pids-limit", String(plan.pidsLimit ?? DEFAULT_PIDS_LIMIT),
		...(rootless ? ["--userns=keep-id"] : []),
		"--user", `${plan.uid}:${plan.gid}`,
		...(plan.network ? ["--network", plan.network] : []),
		...(plan.cpus !== undefined ? ["--cpus", String(plan.cpus)] : []),
		...(plan.memory ? ["--memory", plan.memory] : []),
		...volume(`${plan.mounts.pkg}/runner`, IN.runner, true),
		...volume(`${plan.mounts.pkg}/src`, IN.src, true),
		...volume(`${plan.mounts.pkg}/skills`, IN.skills, true),
		...volume(`${plan.mounts.pkg}/package.json`, IN.pkgJson, true),
		...volume(plan.mounts.run, IN.run),
		...volume(plan.mounts.session, IN.session),
		...volume(plan.mounts.piHome, IN.pi),
		...volume(plan.mounts.workspace, IN.workspace),
		...(plan.mounts.objects ? volume(plan.mounts.objects, plan.mounts.objects, true) : []),
		"-e", `HOME=${IN.home}`,
		"-e", `PI_CODING_AGENT_DIR=${IN.pi}`,
		"-e", `AGENT_BOARD_RUN_ID=${plan.runId}`,
		...plan.env.flatMap((name) => ["-e", name]),
		"-w", IN.workspace,
		plan.image,
		"node", `${IN.runner}/job-runner.mjs`, `${IN.run}/run.json`, `${IN.run}/slot.json`,
	];
}

/** Stop, then kill: `stop -t <grace>` ends it politely, `rm -f` whatever is left (and the container). */
export function containerStopArgs(/** @type {ContainerPlan["engine"]} */ engine, /** @type {string | undefined} */ engineHost, /** @type {string} */ runId, graceS = 10) {
	return {
		stop: [...engineGlobalArgs(engine, engineHost), "stop", "-t", String(graceS), containerName(runId)],
		remove: [...engineGlobalArgs(engine, engineHost), "rm", "-f", containerName(runId)],
	};
}

/** Names of this store's containers (running or not). @param {ContainerPlan["engine"]} engine @param {string | undefined} engineHost @param {string} storeDir */
export function containerListArgs(engine, engineHost, storeDir) {
	return [...engineGlobalArgs(engine, engineHost), "ps", "-a", "--filter", `label=${LABEL_STORE}=${storeDir}`, "--format", "{{.Names}}"];
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

/**
 * argv of a one-shot container that runs `command` against a workspace alone (the run's container is
 * gone): the wip snapshot after a run. Hardened like a run, no network, our files read-only.
 * @param {{ engine: ContainerPlan["engine"], engineHost?: string, image: string, pkg: string, workspace: string, objects?: string, uid: number, gid: number, command: string[] }} plan
 */
export function containerSnapshotArgs(plan) {
	const rootless = plan.engine === "podman" && plan.uid !== 0;
	return [
		...engineGlobalArgs(plan.engine, plan.engineHost),
		"run",
		"--rm",
		"--cap-drop=ALL",
		"--security-opt=no-new-privileges",
		"--read-only",
		"--tmpfs", `${IN.home}:rw,nosuid,nodev`,
		"--network", "none",
		"--pids-limit", String(DEFAULT_PIDS_LIMIT),
		...(rootless ? ["--userns=keep-id"] : []),
		"--user", `${plan.uid}:${plan.gid}`,
		...volume(`${plan.pkg}/runner`, IN.runner, true),
		...volume(plan.workspace, IN.workspace),
		...(plan.objects ? volume(plan.objects, plan.objects, true) : []),
		"-e", `HOME=${IN.home}`,
		"-w", IN.workspace,
		plan.image,
		...plan.command,
	];
}
