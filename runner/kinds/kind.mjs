// What a kind of target is (ssh, container, ...): one object that holds everything kind-specific, so
// the link, the queue, the board and the subcommands never test `kind` (docs/engine.md, "A kind of
// target is one object"). Here: its shape, and the checks every kind's fields get from that one
// statement: config.json and a run's run.json (untrusted files: `shapeError`) and `targets add`
// (the user's words: `configFromInput`). The registry (kinds.mjs) and each kind import this.
import { BoardError } from "../life/reasons.mjs";

/**
 * @typedef {import("../../src/board/engine/types.ts").TargetConfig} TargetConfig
 * @typedef {import("../../src/board/engine/types.ts").TargetSnapshot} TargetSnapshot
 * @typedef {import("../../src/board/engine/types.ts").CheckItem} CheckItem
 * @typedef {import("../../src/board/engine/types.ts").CheckProgress} CheckProgress
 * @typedef {{ storeDir: string, agentDir: string, install?: boolean, env?: Record<string, string>, progress?: CheckProgress, checkMember?: (name: string) => Promise<CheckItem[]> }} CheckOptions
 *   `env`: the target's --env values from the board's environment (a run gets them; so does the check);
 *   `progress`: told what is checked, and each line as soon as it is known;
 *   `checkMember`: a group's member checked as `targets check <member>` would (a missing one: an item saying so)
 */

/**
 * One config field of a kind.
 * @typedef {object} Field
 * @property {"string" | "number" | "words" | "flag"} type  words: a list of strings (a command's argv, variable
 *   names); flag: a `targets add` flag without a value (true when given)
 * @property {boolean} [required]   in the config (`default` fills it on input)
 * @property {string} [flag]        its `targets add` flag; the kind's own flag (selects the kind) is the field with `selects`
 * @property {boolean} [selects]    this field's flag picks the kind (`--ssh <host>`, `--container docker|podman`)
 * @property {string} [value]       the flag's value in usage lines ("<host>")
 * @property {boolean} [hidden]     left out of the usage line (refused on input, for now)
 * @property {unknown} [default]
 * @property {readonly string[]} [oneOf]
 * @property {(value: unknown) => string | undefined} [check]  what else is wrong with a config value ("must be a number > 0")
 * @property {(value: unknown, input: Record<string, unknown>) => unknown} [input]  the config's value for what
 *   `targets add` got (`input`: everything it got, for a check that depends on another flag); throws its words
 * @property {boolean} [inputOnly]  says how to read the other flags, and is not kept in the config (--dir-absolute)
 */

/**
 * @typedef {object} TargetKind
 * @property {string} kind                 config.json /kind
 * @property {string} what                 the kind in a sentence's words ("ssh", "container")
 * @property {Record<string, Field>} fields its config beside `kind`, `max` and `env` (COMMON_FIELDS)
 * @property {string} [checkArgs]          what `targets check <name>` wants after an add ("--install")
 * @property {(config: TargetConfig) => string} describe   one line: where runs go ("ssh dev (dir .agent-board)")
 * @property {(config: TargetConfig) => string[]} [members]
 *   a group of targets (a pool): the names of its members. It has no far side of its own: the queue
 *   places each of its runs on a member when it claims it (life/placement.mjs); its `max` defaults to
 *   its members' limits added up
 * @property {(target: TargetSnapshot, options: CheckOptions) => Promise<CheckItem[]>} check
 * @property {(target: TargetSnapshot, context: { storeDir: string, hooks?: import("../link/driver.mjs").TargetHooks }) => Promise<import("../link/driver.mjs").TargetDriver>} driver
 *   the target's link's driver for its runs there (loaded on first use: pi's start-up reads the kinds
 *   for their flags); `hooks` hear what the driver learns of the target (its load, reachable or not)
 * @property {(storeDir: string, target: TargetSnapshot, runIsLive: (rowId: string, runId: string) => boolean | Promise<boolean>) => Promise<{ removed: string[], error?: Error }>} [reconcile]
 *   removes what the kind leaves at the target that no run owns any more (a container by label)
 * @property {(target: TargetSnapshot, context: { storeDir: string }) => void} [forget]
 *   after `targets remove`: what the kind holds for the target here (ssh's shared connection)
 * @property {(target: TargetSnapshot, context: { storeDir: string, rowId: string }) => Promise<{ ok: boolean, text: string }>} [removeWork]
 *   a row's workspace at the target, when its local worktree (the mirror) is removed: removed, or
 *   where it stays and why, in one sentence for the user
 */

export const DEFAULT_TARGET_MAX = 4;
/** A target's concurrency limit at most: beyond it a typo (--max 4000) would start a fleet by mistake. */
export const MAX_TARGET_MAX = 256;
/** A variable's name (--env NAME): forwarded by name, its value never on a command line. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A refusal of the user's input (`targets add`). @param {string} message */
export const invalid = (message) => new BoardError("invalid", message);

/** @param {unknown} value */
const isLimit = (value) =>
	typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= MAX_TARGET_MAX;

/** No control characters in anything that ends up in a command line or a path. @param {string} flag */
export const plain = (flag) => (/** @type {unknown} */ value) => {
	if (typeof value !== "string" || !value || /[\x00-\x1f\x7f]/.test(value))
		throw invalid(`${flag} must be non-empty, without control characters`);
	return value;
};

/** The fields every kind has. @type {Record<string, Field>} */
export const COMMON_FIELDS = {
	max: {
		type: "number",
		required: true,
		flag: "--max",
		value: "<n>",
		default: DEFAULT_TARGET_MAX,
		check: (value) => (isLimit(value) ? undefined : `must be a whole number from 1 to ${MAX_TARGET_MAX}`),
		input: (value) => {
			if (!isLimit(value))
				throw invalid(`--max must be a whole number from 1 to ${MAX_TARGET_MAX} (got ${JSON.stringify(value)})`);
			return value;
		},
	},
	/** `targets drain`: it takes no new run (a pool places nothing there); what runs there finishes. */
	drained: { type: "flag" },
	env: {
		type: "words",
		required: true,
		flag: "--env",
		value: "<NAME>",
		default: [],
		check: (value) =>
			Array.isArray(value) && value.every((name) => typeof name === "string" && ENV_NAME.test(name))
				? undefined
				: "must be a list of variable names",
		input: (value) => {
			const names = /** @type {unknown[]} */ (Array.isArray(value) ? value : [value]);
			for (const name of names)
				if (typeof name !== "string" || !ENV_NAME.test(name))
					throw invalid(`--env takes a variable's name, not its value (got ${JSON.stringify(name)})`);
			return [...new Set(names)];
		},
	},
};

/** @param {Field} field @param {unknown} value @returns {string | undefined} */
function fieldError(field, value) {
	if (field.type === "string" && (typeof value !== "string" || (field.required && !value)))
		return field.required ? "must be a non-empty string" : "must be a string";
	if (field.type === "number" && (typeof value !== "number" || !Number.isFinite(value))) return "must be a number";
	if (field.type === "words" && (!Array.isArray(value) || !value.every((word) => typeof word === "string")))
		return "must be a list of strings";
	if (field.type === "flag" && typeof value !== "boolean") return "must be true or false";
	if (field.oneOf && !field.oneOf.includes(/** @type {string} */ (value)))
		return `must be one of ${field.oneOf.join(", ")}`;
	return field.check?.(value);
}

/** Every field of `kind`, the common ones last. @param {TargetKind} kind @returns {[string, Field][]} */
export const fieldsOf = (kind) => [...Object.entries(kind.fields), ...Object.entries(COMMON_FIELDS)];

/**
 * What is wrong with a target's config of this kind ("/host must be a non-empty string"), or undefined.
 * @param {TargetKind} kind @param {Record<string, unknown>} value
 */
export function shapeError(kind, value) {
	for (const [name, field] of fieldsOf(kind)) {
		if (value[name] === undefined) {
			if (field.required) return `/${name} is required`;
			continue;
		}
		const error = fieldError(field, value[name]);
		if (error) return `/${name} ${error}`;
	}
	return undefined;
}

/**
 * The config entry for what `targets add` got (`{ kind, host, max, ... }`): each field's input check,
 * its default, nothing else kept. Throws the user's words (code "invalid").
 * @param {TargetKind} kind @param {Record<string, unknown>} input @returns {TargetConfig}
 */
export function configFromInput(kind, input) {
	/** @type {Record<string, unknown>} */
	const config = { kind: kind.kind };
	for (const [name, field] of fieldsOf(kind)) {
		const given = input[name];
		const value = given === undefined ? field.default : field.input ? field.input(given, input) : given;
		if (value === undefined) {
			if (field.required) throw invalid(`targets add --${kind.kind} needs ${field.flag} ${field.value}`);
			continue;
		}
		if (field.inputOnly) continue;
		config[name] = Array.isArray(value) ? [...value] : value;
	}
	return /** @type {TargetConfig} */ (config);
}

/** The kind's `targets add` usage line, from its fields. @param {TargetKind} kind */
export function usageOf(kind) {
	const words = ["targets add <name>"];
	for (const [, field] of fieldsOf(kind)) {
		if (!field.flag || field.hidden) continue;
		const flag = field.type === "flag" ? field.flag : `${field.flag} ${field.value}`;
		words.push(
			field.selects || (field.required && field.default === undefined)
				? flag
				: field.flag === "--env"
					? `[${flag}]...`
					: `[${flag}]`,
		);
	}
	return words.join(" ");
}
