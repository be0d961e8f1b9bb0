// Reading the rules files a run names (run.json /supervise/rules, most specific first: a preset's, the
// trusted project's, the user's). Read at each question, so an edit applies to the next one. A file that
// is missing is no rules; one that cannot be read, is too large or is not UTF-8 text (a NUL byte, a byte
// sequence that is not UTF-8) is an error naming the path, and the supervisor then leaves every question
// to the person: random bytes are never read as the person's words.
import { homedir } from "node:os";
import { readFileSync, statSync } from "node:fs";
import { joinRules, parseRules } from "./rules.mjs";

/** A rules file larger than this is refused (it is meant to be read by a person). */
export const MAX_RULES_BYTES = 64 * 1024;

/** The path as a person reads it (~ for the home directory). @param {string} path */
export function shortRulesPath(path) {
	const home = homedir();
	return home && path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A rules file's bytes as text, or why they are not text.
 * @param {Uint8Array} bytes
 * @returns {string | { error: string }}
 */
export function rulesText(bytes) {
	if (bytes.length > MAX_RULES_BYTES) return { error: `larger than ${MAX_RULES_BYTES} bytes` };
	const nul = bytes.indexOf(0);
	if (nul >= 0) return { error: `not text: a NUL byte at byte ${nul}` };
	try {
		return UTF8.decode(bytes);
	} catch {
		return { error: "not UTF-8 text" };
	}
}

/**
 * @param {readonly string[]} paths
 * @returns {import("./rules.mjs").RuleSet}
 */
export function readRules(paths) {
	return joinRules(
		paths.map((path) => {
			const name = shortRulesPath(path);
			try {
				const stat = statSync(path);
				if (!stat.isFile()) return { rules: [], words: "", errors: [`${name}: not a file`] };
				if (stat.size > MAX_RULES_BYTES)
					return { rules: [], words: "", errors: [`${name}: larger than ${MAX_RULES_BYTES} bytes`] };
				const text = rulesText(readFileSync(path));
				if (typeof text !== "string") return { rules: [], words: "", errors: [`${name}: ${text.error}`] };
				return parseRules(text, name);
			} catch (error) {
				if (/** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT")
					return { rules: [], words: "", errors: [] };
				return {
					rules: [],
					words: "",
					errors: [`${name}: ${error instanceof Error ? error.message : String(error)}`],
				};
			}
		}),
	);
}
