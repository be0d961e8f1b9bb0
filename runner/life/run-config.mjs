// run.json: one run's config, built here for every run (buildRunConfig: the board's launch, and the far
// side's prepare for a target's or a container's layout, from the part the link sends), written once
// and read by its one reader, the runner. The runner cannot load typebox, so the shape is defined here,
// once, and checked on read: a wrong file is refused with the path and the field, and left as it is.
import { RUN_LAYOUTS } from "../store/store-layout.mjs";
import { readTextNoFollow } from "../store/safe-read.mjs";

/**
 * @typedef {object} RunConfig
 * @property {string} rowId
 * @property {string} runId
 * @property {string} runDir
 * @property {string} storeDir
 * @property {number} maxConcurrent
 * @property {string} sessionFile
 * @property {string} cwd
 * @property {string} prompt
 * @property {string[]} piCommand
 * @property {string} [model]
 * @property {string} [thinking]
 * @property {string} [extensionPath]
 * @property {Record<string, string>} env
 * @property {string} [summaryModel]
 * @property {number} [summaryTimeoutMs]
 * @property {number} [stopGraceMs]
 * @property {number} createdAt
 * @property {import("../store/store-layout.mjs").RunLayout} [layout]  where its paths are (absent: the board's store)
 * @property {import("../../src/board/engine/types.ts").TargetSnapshot} [target]  a non-local run: the target as it was when dispatched (its link checks it)
 * @property {string} [repo]      a row in a worktree (every non-local run): the local repository
 * @property {string} [worktree]  a row in a worktree: the row's local worktree (a non-local run's: the mirror of the target's workspace)
 * @property {string} [worktreeBase]  a row whose worktree is not made yet: the commit its run makes it from (its runner, or its link)
 * @property {string} [agentDir]  a non-local run: the user's pi agent dir (a container's pi home is made from it)
 * @property {Supervise} [supervise]  what the supervisor reads of the row (runner/supervisor/)
 * @property {string} [systemPrompt]  extra system text for the worker (a preset's), sent with the prompt on fd 3
 * @property {string} [pool]      a pool's run: the pool it was placed from (its target is the member)
 * @property {string} [budgetBy]  "link": a far run whose link decides each turn's end against this machine's budgets (runner/far/far-turn-hold.mjs)
 */

/**
 * The supervisor's view of the row: the rules files that apply, most specific first (a preset's, the
 * trusted project's, the user's), and the facts the rules' conditions name (`member`: the pool member
 * a target run's link adds, runner/link/link-supervisor.mjs).
 * @typedef {{ rules: string[], rowName?: string, preset?: string, target?: string, member?: string }} Supervise
 */

/**
 * @template T
 * @typedef {T extends string[] ? "strings" : T extends import("../store/store-layout.mjs").RunLayout ? "layout" : T extends string ? "string" : T extends number ? "number" : T extends Record<string, string> ? "env" : "object"} KindOf
 */

/**
 * Each field's kind, derived from RunConfig: a field added there fails to typecheck until it is here.
 * @type {{ [K in keyof RunConfig]-?: undefined extends RunConfig[K] ? `${KindOf<NonNullable<RunConfig[K]>>}?` : KindOf<RunConfig[K]> }}
 */
const FIELDS = {
	rowId: "string",
	runId: "string",
	runDir: "string",
	storeDir: "string",
	maxConcurrent: "number",
	sessionFile: "string",
	cwd: "string",
	prompt: "string",
	piCommand: "strings",
	model: "string?",
	thinking: "string?",
	extensionPath: "string?",
	env: "env",
	summaryModel: "string?",
	summaryTimeoutMs: "number?",
	stopGraceMs: "number?",
	createdAt: "number",
	layout: "layout?",
	target: "object?",
	repo: "string?",
	worktree: "string?",
	worktreeBase: "string?",
	agentDir: "string?",
	supervise: "object?",
	systemPrompt: "string?",
	pool: "string?",
	budgetBy: "string?",
};

/** @param {unknown} value @param {string} kind @returns {string | undefined} what is wrong */
function kindError(value, kind) {
	const base = kind.replace("?", "");
	if (value === undefined) return kind.endsWith("?") ? undefined : "is required";
	if (base === "string") return typeof value === "string" ? undefined : "must be string";
	if (base === "number") return typeof value === "number" && Number.isFinite(value) ? undefined : "must be number";
	if (base === "strings")
		return Array.isArray(value) && value.length > 0 && value.every((word) => typeof word === "string")
			? undefined
			: "must be a non-empty array of strings";
	if (base === "layout")
		return RUN_LAYOUTS.includes(/** @type {never} */ (value))
			? undefined
			: `must be one of ${RUN_LAYOUTS.join(", ")}`;
	if (base === "object")
		return value !== null && typeof value === "object" && !Array.isArray(value) ? undefined : "must be object";
	const entries =
		value !== null && typeof value === "object" && !Array.isArray(value) ? Object.values(value) : undefined;
	return entries?.every((entry) => typeof entry === "string") ? undefined : "must be an object of strings";
}

/**
 * The first shape error of a parsed run.json ("/prompt must be string"), or undefined.
 * @param {unknown} value
 */
export function runConfigError(value) {
	if (value === null || typeof value !== "object" || Array.isArray(value)) return "/ must be object";
	const record = /** @type {Record<string, unknown>} */ (value);
	for (const [field, kind] of Object.entries(FIELDS)) {
		const error = kindError(record[field], kind);
		if (error) return `/${field} ${error}`;
	}
	return undefined;
}

/** @param {unknown} value */
function superviseError(value) {
	if (value === undefined) return undefined;
	const supervise = /** @type {Record<string, unknown>} */ (value);
	if (!Array.isArray(supervise.rules) || !supervise.rules.every((path) => typeof path === "string"))
		return "/supervise/rules must be an array of strings";
	for (const key of ["rowName", "preset", "target"])
		if (supervise[key] !== undefined && typeof supervise[key] !== "string") return `/supervise/${key} must be string`;
	return undefined;
}

/**
 * Reads and checks run.json; throws "<path>: /field must be ..." (or the JSON error) naming the file.
 * @param {string} path
 * @returns {RunConfig}
 */
export function readRunConfig(path) {
	let value;
	try {
		value = JSON.parse(readTextNoFollow(path));
	} catch (error) {
		throw new Error(`${path}: ${error instanceof Error ? error.message : String(error)}`);
	}
	const error = runConfigError(value) ?? superviseError(/** @type {Record<string, unknown>} */ (value).supervise);
	if (error) throw new Error(`${path}: ${error}`);
	return /** @type {RunConfig} */ (value);
}

/**
 * What a run is, wherever it runs: the part of run.json that travels with it (a link sends it to the far
 * side, which adds where the run's files are there).
 * @typedef {Pick<RunConfig, "rowId" | "runId" | "prompt" | "model" | "thinking" | "env" | "summaryModel" | "summaryTimeoutMs" | "stopGraceMs" | "createdAt" | "systemPrompt" | "budgetBy">} PortableRun
 */

/**
 * Where a run's files are in its layout, which pi runs it, and what that place adds to its environment.
 * @typedef {Pick<RunConfig, "layout" | "runDir" | "storeDir" | "sessionFile" | "cwd" | "extensionPath" | "piCommand" | "maxConcurrent"> & { env?: Record<string, string> }} RunPlace
 */

/** @type {(keyof PortableRun)[]} */
const PORTABLE = [
	"rowId",
	"runId",
	"prompt",
	"model",
	"thinking",
	"env",
	"summaryModel",
	"summaryTimeoutMs",
	"stopGraceMs",
	"createdAt",
	"systemPrompt",
	"budgetBy",
];

/** Every run is a board worker, and says which row it works for. @param {string} rowId */
export const workerEnv = (rowId) => ({ AGENT_BOARD_WORKER: "1", AGENT_BOARD_ROW: rowId });

/**
 * run.json, the one builder. `elsewhere`: a row's worktree (the repository, the worktree, its base when
 * the run makes it) and, for a run on a target, the target's snapshot and the pi agent dir its link uses.
 * @param {PortableRun} run @param {RunPlace} place @param {Pick<RunConfig, "target" | "repo" | "worktree" | "worktreeBase" | "agentDir">} [elsewhere]
 * @returns {RunConfig}
 */
export function buildRunConfig(run, place, elsewhere = {}) {
	const { env: placeEnv, layout, ...where } = place;
	return {
		...portableRun(run),
		...(layout && layout !== "store" ? { layout } : {}),
		...where,
		env: { ...workerEnv(run.rowId), ...placeEnv, ...run.env },
		...elsewhere,
	};
}

/** The part of a run.json that travels. @param {PortableRun} config @returns {PortableRun} */
export function portableRun(config) {
	/** @type {Record<string, unknown>} */
	const out = {};
	for (const field of PORTABLE) if (config[field] !== undefined) out[field] = config[field];
	return /** @type {PortableRun} */ (out);
}
