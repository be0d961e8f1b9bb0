// Where a row's files live, derived from the store root and ids alone. The runner, the queue and the
// extension build every path this way and never from a path read out of a file: a store file may be
// planted or stale, and must not be able to send a write (or a start) anywhere else.
import { basename, dirname, join } from "node:path";

/** Ids become path segments under the store: letters, digits, "-" and "_" only. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** @param {unknown} id @returns {id is string} */
export function isValidId(id) {
	return typeof id === "string" && ID_PATTERN.test(id);
}

/** @param {string} root @param {string} rowId */
export const rowDirOf = (root, rowId) => join(root, "rows", rowId);

/** @param {string} root @param {string} rowId @param {string} runId */
export const runDirOf = (root, rowId, runId) => join(root, "rows", rowId, "runs", runId);

/** @param {string} root @param {string} rowId */
export const sessionFileOf = (root, rowId) => join(root, "sessions", `${rowId}.jsonl`);

/** Inside a container the run dir and its row's session dir are mounted at fixed places. */
export const CONTAINER_RUN_DIR = "/ab/run";
export const CONTAINER_SESSION_DIR = "/ab/session";

/** @typedef {"store" | "target" | "container"} RunLayout */
export const RUN_LAYOUTS = /** @type {const} */ (["store", "target", "container"]);

/**
 * Where a run's files must be, by the layout its run.json names: the board's store; a target's store
 * (each row's session in a dir of its own, so a container gets its row's and nothing else); or the
 * mount points inside a container. The runner refuses a run.json whose paths differ.
 * @param {RunLayout} layout @param {string} root @param {string} rowId @param {string} runId
 */
export function runPathsOf(layout, root, rowId, runId) {
	if (layout === "container")
		return { runDir: CONTAINER_RUN_DIR, sessionFile: join(CONTAINER_SESSION_DIR, `${rowId}.jsonl`) };
	if (layout === "target")
		return { runDir: runDirOf(root, rowId, runId), sessionFile: join(root, "sessions", rowId, `${rowId}.jsonl`) };
	return { runDir: runDirOf(root, rowId, runId), sessionFile: sessionFileOf(root, rowId) };
}

/**
 * A target's dirs under its `dir` (its store in this layout, the mirrors, the workspaces). Each row's session has a directory of its own, so a container gets its row's
 * session and nothing of the others.
 * @param {string} dir @param {string} rowId @param {string} [runId]
 */
export function targetPaths(dir, rowId, runId = "") {
	const store = join(dir, "store");
	return {
		store,
		row: join(store, "rows", rowId),
		run: join(store, "rows", rowId, "runs", runId),
		session: runPathsOf("target", store, rowId, runId).sessionFile,
		work: join(dir, "work", rowId),
	};
}

/** @param {string} dir @param {string} repoKey */
export const targetMirrorPath = (dir, repoKey) => join(dir, "repos", `${repoKey}.git`);

/**
 * The target dir, row and run of a far run's dir (<dir>/store/rows/<row>/runs/<run>), so a follow there
 * takes every other path from the layout (never from run.json, which the agent there can rewrite), or
 * undefined when the path is not one.
 * @param {string} runDir
 * @returns {{ dir: string, rowId: string, runId: string } | undefined}
 */
export function farRunOf(runDir) {
	const runId = basename(runDir);
	const runs = dirname(runDir);
	const rowDir = dirname(runs);
	const rows = dirname(rowDir);
	const store = dirname(rows);
	const rowId = basename(rowDir);
	if (
		basename(runs) !== "runs" ||
		basename(rows) !== "rows" ||
		basename(store) !== "store" ||
		!isValidId(runId) ||
		!isValidId(rowId)
	)
		return undefined;
	return { dir: dirname(store), rowId, runId };
}
