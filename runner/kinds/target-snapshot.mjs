// A target as its run's run.json carries it (dispatch snapshots the board config's entry, so an edit
// or removal of the target never changes a run in flight). The link checks the fields it uses before
// it acts on them; the full shape is src/board/engine/schemas.ts TargetConfigSchema.
import { LOCAL_TARGET, TARGET_NAME } from "../life/board-config.mjs";
import { CONTAINER_ENGINES } from "../life/vocabulary.mjs";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** @param {unknown} value */
const text = (value) => typeof value === "string" && value.length > 0;
/** @param {unknown} value */
const optText = (value) => value === undefined || typeof value === "string";

/**
 * What is wrong with a run's target snapshot ("/host must be a non-empty string"), or undefined.
 * @param {unknown} value
 */
export function targetSnapshotError(value) {
	if (value === null || typeof value !== "object" || Array.isArray(value)) return "must be object";
	const t = /** @type {Record<string, unknown>} */ (value);
	if (typeof t.name !== "string" || !TARGET_NAME.test(t.name) || t.name === LOCAL_TARGET) return "/name is not a target name";
	if (typeof t.max !== "number" || !Number.isInteger(t.max) || t.max < 1) return "/max must be a whole number >= 1";
	if (!Array.isArray(t.env) || !t.env.every((name) => typeof name === "string" && ENV_NAME.test(name))) return "/env must be a list of variable names";
	if (t.kind === "ssh") {
		if (!text(t.host)) return "/host must be a non-empty string";
		if (!text(t.dir)) return "/dir must be a non-empty string";
		if (!optText(t.sshConfig)) return "/sshConfig must be a string";
		if (t.pi !== undefined && (!Array.isArray(t.pi) || t.pi.length === 0 || !t.pi.every(text))) return "/pi must be a non-empty list of words";
		return undefined;
	}
	if (t.kind === "container") {
		if (!CONTAINER_ENGINES.some((engine) => engine === t.engine)) return `/engine must be one of ${CONTAINER_ENGINES.join(", ")}`;
		if (!text(t.image)) return "/image must be a non-empty string";
		for (const field of ["engineHost", "network", "memory"]) if (!optText(t[field])) return `/${field} must be a string`;
		if (t.cpus !== undefined && (typeof t.cpus !== "number" || !(t.cpus > 0))) return "/cpus must be a number > 0";
		return undefined;
	}
	return "/kind must be ssh or container";
}
