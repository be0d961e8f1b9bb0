// Reading the rules files a run names (run.json /supervise/rules, most specific first: a preset's, the
// trusted project's, the user's). Read at each question, so an edit applies to the next one. A file that
// is missing is no rules; one that cannot be read, or is too large, is an error the supervisor escalates with.
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
				return parseRules(readFileSync(path, "utf8"), name);
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
