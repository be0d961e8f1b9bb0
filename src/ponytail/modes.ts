/** Mode names and the pure parsing of what a user typed. */

export const MODES = ["off", "lite", "full", "ultra"] as const;
export type PonytailMode = (typeof MODES)[number];
/** Modes that inject rules; `review` is a one-shot level, never stored or a default. */
export type ActiveLevel = Exclude<PonytailMode, "off"> | "review";

export const FALLBACK_DEFAULT: PonytailMode = "full";

export function parseMode(value: unknown): PonytailMode | undefined {
	if (typeof value !== "string") return undefined;
	const lower = value.trim().toLowerCase();
	return (MODES as readonly string[]).includes(lower) ? (lower as PonytailMode) : undefined;
}

export type PonytailCommand =
	| { kind: "on" }
	| { kind: "set"; mode: PonytailMode }
	| { kind: "status" }
	| { kind: "default"; mode: PonytailMode }
	| { kind: "log"; count: number }
	| { kind: "error"; message: string };

export const SUBCOMMANDS = ["status", "default", "log"] as const;
const VALID_ARGS = `${MODES.join(", ")}, status, default <${MODES.join("|")}>, log [N]`;
export const DEFAULT_LOG_COUNT = 10;

export function parsePonytailArgs(args: string): PonytailCommand {
	const parts = args.trim().split(/\s+/).filter(Boolean);
	const [first, second, ...rest] = parts.map((part) => part.toLowerCase());
	if (first === undefined) return { kind: "on" };
	const invalid = (what: string): PonytailCommand => ({
		kind: "error",
		message: `ponytail: ${what}. Valid: ${VALID_ARGS}`,
	});
	if (rest.length > 0 || (second !== undefined && first !== "default" && first !== "log"))
		return invalid(`too many arguments "${args.trim()}"`);
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
		return Number.isInteger(count) && count > 0
			? { kind: "log", count }
			: invalid(`"log" needs a positive whole number, got "${second}"`);
	}
	return invalid(`unknown argument "${first}"`);
}

/** Completions for `/ponytail <prefix>`: modes and subcommands, then modes after `default `. */
/**
 * Completions for `/ponytail <prefix>`. An argument that already is a whole word completes nothing:
 * otherwise the first enter only accepts the completion, and the next command typed glues onto it.
 */
export function completePonytailArgs(prefix: string): string[] {
	const lower = prefix.toLowerCase();
	if (lower.startsWith("default ")) {
		const rest = lower.slice("default ".length).trimStart();
		if ((MODES as readonly string[]).includes(rest)) return [];
		return MODES.filter((mode) => mode.startsWith(rest)).map((mode) => `default ${mode}`);
	}
	const word = lower.trimStart();
	const words: readonly string[] = [...MODES, ...SUBCOMMANDS];
	if (words.includes(word)) return [];
	return words.filter((candidate) => candidate.startsWith(word));
}

/** The whole message is a deactivation phrase; a sentence that merely contains one is not. */
export function isDeactivationPhrase(text: string): boolean {
	const normalized = text
		.trim()
		.toLowerCase()
		.replace(/[\s.!?,;:]+$/u, "")
		.replace(/\s+/g, " ");
	return normalized === "stop ponytail" || normalized === "normal mode";
}

interface ModeEntryLike {
	type: string;
	customType?: string;
	data?: unknown;
}

export const MODE_ENTRY_TYPE = "ponytail-mode";

/** The last mode stored on a branch (oldest first), or undefined when none was stored. */
export function modeFromBranch(entries: readonly ModeEntryLike[]): PonytailMode | undefined {
	for (let i = entries.length - 1; i >= 0; i--) {
		const entry = entries[i];
		if (entry?.type !== "custom" || entry.customType !== MODE_ENTRY_TYPE) continue;
		const data = entry.data as { mode?: unknown } | undefined;
		const mode = parseMode(data?.mode);
		if (mode) return mode;
	}
	return undefined;
}
