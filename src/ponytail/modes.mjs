/** Mode names and the pure parsing of what a user typed. */

export const MODES = /** @type {const} */ (["off", "lite", "full", "ultra"]);
/** @typedef {(typeof MODES)[number]} PonytailMode */
/** Modes that inject rules; `review` is a one-shot level, never stored or a default. @typedef {Exclude<PonytailMode, "off"> | "review"} ActiveLevel */

/** @type {PonytailMode} */
export const FALLBACK_DEFAULT = "full";

/** @param {unknown} value @returns {PonytailMode | undefined} */
export function parseMode(value) {
	if (typeof value !== "string") return undefined;
	const lower = value.trim().toLowerCase();
	return MODES.find((mode) => mode === lower);
}

/**
 * @typedef {{ kind: "on" } | { kind: "set", mode: PonytailMode } | { kind: "status" } | { kind: "default", mode: PonytailMode }
 *   | { kind: "log", count: number } | { kind: "error", message: string }} PonytailCommand
 */

export const SUBCOMMANDS = /** @type {const} */ (["status", "default", "log"]);
const VALID_ARGS = `${MODES.join(", ")}, status, default <${MODES.join("|")}>, log [N]`;
export const DEFAULT_LOG_COUNT = 10;

/** @param {string} args @returns {PonytailCommand} */
export function parsePonytailArgs(args) {
	const parts = args.trim().split(/\s+/).filter(Boolean);
	const [first, second, ...rest] = parts.map((part) => part.toLowerCase());
	if (first === undefined) return { kind: "on" };
	/** @param {string} what @returns {PonytailCommand} */
	const invalid = (what) => ({ kind: "error", message: `ponytail: ${what}. Valid: ${VALID_ARGS}` });
	if (rest.length > 0 || (second !== undefined && first !== "default" && first !== "log")) return invalid(`too many arguments "${args.trim()}"`);
	const mode = parseMode(first);
	if (mode) return { kind: "set", mode };
	if (first === "status") return { kind: "status" };
	if (first === "default") {
		const target = parseMode(second);
		return target ? { kind: "default", mode: target } : invalid(`"default" needs a mode, got "${second ?? ""}"`);
	}
	if (first === "log") {
		if (second === undefined) return { kind: "log", count: DEFAULT_LOG_COUNT };
		const count = Number(second);
		return Number.isInteger(count) && count > 0 ? { kind: "log", count } : invalid(`"log" needs a positive whole number, got "${second}"`);
	}
	return invalid(`unknown argument "${first}"`);
}

/** Completions for `/ponytail <prefix>`: modes and subcommands, then modes after `default `. */
/**
 * Completions for `/ponytail <prefix>`. An argument that already is a whole word completes nothing:
 * otherwise the first enter only accepts the completion, and the next command typed glues onto it.
 * @param {string} prefix @returns {string[]}
 */
export function completePonytailArgs(prefix) {
	const lower = prefix.toLowerCase();
	if (lower.startsWith("default ")) {
		const rest = lower.slice("default ".length).trimStart();
		if (MODES.some((mode) => mode === rest)) return [];
		return MODES.filter((mode) => mode.startsWith(rest)).map((mode) => `default ${mode}`);
	}
	const word = lower.trimStart();
	/** @type {readonly string[]} */
	const words = [...MODES, ...SUBCOMMANDS];
	if (words.includes(word)) return [];
	return words.filter((candidate) => candidate.startsWith(word));
}

/** The whole message is a deactivation phrase; a sentence that merely contains one is not. */
/** @param {string} text */
export function isDeactivationPhrase(text) {
	const normalized = text
		.trim()
		.toLowerCase()
		.replace(/[\s.!?,;:]+$/u, "")
		.replace(/\s+/g, " ");
	return normalized === "stop ponytail" || normalized === "normal mode";
}

/** @typedef {{ type: string, customType?: string, data?: unknown }} ModeEntryLike */

export const MODE_ENTRY_TYPE = "ponytail-mode";

/** The last mode stored on a branch (oldest first), or undefined when none was stored. */
/** @param {readonly ModeEntryLike[]} entries @returns {PonytailMode | undefined} */
export function modeFromBranch(entries) {
	for (let i = entries.length - 1; i >= 0; i--) {
		const entry = entries[i];
		if (entry?.type !== "custom" || entry.customType !== MODE_ENTRY_TYPE) continue;
		const data = /** @type {{ mode?: unknown } | undefined} */ (entry.data);
		const mode = parseMode(data?.mode);
		if (mode) return mode;
	}
	return undefined;
}
