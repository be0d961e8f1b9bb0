// The kinds of target, looked up by name: the list in registry.mjs, and any registered at run time
// (a test's fake kind; a link process gets it the same way, through NODE_OPTIONS=--import). Everything
// kind-specific is asked of a kind's object here, so no caller tests `kind`.
import { LOCAL_TARGET, TARGET_NAME } from "../life/vocabulary.mjs";
import { configFromInput, invalid, shapeError, usageOf } from "./kind.mjs";
import { KINDS } from "./registry.mjs";

/** @typedef {import("./kind.mjs").TargetKind} TargetKind */
/** @typedef {import("./kind.mjs").TargetConfig} TargetConfig */
/** @typedef {import("./kind.mjs").TargetSnapshot} TargetSnapshot */

/** @type {Map<string, TargetKind>} */
const known = new Map(KINDS.map((kind) => [kind.kind, kind]));

/** Adds a kind (or replaces one of the same name). @param {TargetKind} kind */
export function registerKind(kind) {
	known.set(kind.kind, kind);
}

/** Every kind, in registry order. */
export const allKinds = () => [...known.values()];

/** "ssh or container" @param {string} [last] */
function kindWords(last = "or") {
	const names = [...known.keys()];
	return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} ${last} ${names.at(-1)}`;
}

/** The kind of a target's config; throws for a kind this package does not know. @param {{ kind?: unknown }} config */
export function kindOf(config) {
	const kind = typeof config.kind === "string" ? known.get(config.kind) : undefined;
	if (!kind) throw new Error(`unknown target kind: ${JSON.stringify(config.kind)}`);
	return kind;
}

/**
 * What is wrong with a target's config (`named`: a run's snapshot, which carries its name), as
 * "/field must be ...", or undefined. The one check of config.json's targets and run.json's /target.
 * @param {unknown} value @param {{ named?: boolean }} [options]
 */
export function targetError(value, options = {}) {
	if (value === null || typeof value !== "object" || Array.isArray(value)) return "must be object";
	const t = /** @type {Record<string, unknown>} */ (value);
	if (options.named && (typeof t.name !== "string" || !isTargetName(t.name))) return "/name is not a target name";
	const kind = typeof t.kind === "string" ? known.get(t.kind) : undefined;
	if (!kind) return `/kind must be ${kindWords()}`;
	return shapeError(kind, t);
}

/** A target's name: not "local", a path component. @param {string} name */
export const isTargetName = (name) => TARGET_NAME.test(name) && name !== LOCAL_TARGET;

/**
 * A target as `targets add` (or a tool) gives it, checked and completed into its config entry. A
 * group's members must be targets already (`targets`: the board's), none a group itself; its limit
 * defaults to theirs added up.
 * @param {Record<string, unknown>} input `{ kind, ...fields }`
 * @param {{ targets?: Record<string, TargetConfig> }} [board]
 * @returns {TargetConfig}
 */
export function targetFromInput(input, board = {}) {
	const kind = typeof input.kind === "string" ? known.get(input.kind) : undefined;
	if (!kind)
		throw invalid(
			`a target is ${allKinds()
				.map((k) => selectorUsage(k))
				.join(" or ")}`,
		);
	const config = configFromInput(kind, kind.members && input.max === undefined ? { ...input, max: 1 } : input);
	if (!kind.members) return config;
	const targets = board.targets ?? {};
	const problem = groupError(config, targets);
	if (problem) throw invalid(`--${kind.kind}: ${problem}`);
	if (input.max === undefined)
		config.max = kind.members(config).reduce((sum, name) => sum + (targets[name]?.max ?? 0), 0);
	return config;
}

/** The members of a group target (a pool), or undefined for a target that runs runs itself. @param {TargetConfig} config */
export function membersOf(config) {
	const kind = typeof config.kind === "string" ? known.get(config.kind) : undefined;
	return kind?.members?.(config);
}

/**
 * What is wrong with a group's members in a board's targets: one that is not a target, or a group.
 * @param {TargetConfig} config @param {Record<string, TargetConfig>} targets
 */
export function groupError(config, targets) {
	for (const name of membersOf(config) ?? []) {
		const member = targets[name];
		if (!member) return `${name} is not a target (add it first)`;
		if (membersOf(member))
			return `${name} is a ${kindOf(member).what} itself (a member runs runs: ssh, container, ...)`;
	}
	return undefined;
}

/** The kind's own flag and value ("--ssh <host>"). @param {TargetKind} kind */
export function selectorUsage(kind) {
	const [, field] = Object.entries(kind.fields).find(([, f]) => f.selects) ?? [];
	return field ? `${field.flag} ${field.value}` : `--${kind.kind}`;
}

/** Every kind's `targets add` usage line. */
export const addUsages = () => allKinds().map(usageOf);

/** The link's driver for runs on `target`. @param {TargetSnapshot} target @param {{ storeDir: string, hooks?: import("../link/driver.mjs").TargetHooks }} context */
export function driverFor(target, context) {
	return kindOf(target).driver(target, context);
}
