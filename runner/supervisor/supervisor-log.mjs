// <store>/supervisor.log: every decision of every row's supervisor, one JSON line each (question, the
// rule that fired or "model", the answer or the note, how long it took, what the model cost). Runners
// append to it at once: one write(2) per line on an O_APPEND descriptor, whole on a local file system.
// Read back by the replay (`/agent-board supervisor replay`) and the bench; a torn or foreign line is skipped.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { appendNoFollow } from "../store/append-file.mjs";

export const SUPERVISOR_LOG = "supervisor.log";

/**
 * @typedef {object} SupervisorLine
 * @property {number} at            when the question was asked (ms)
 * @property {string} row
 * @property {string} run
 * @property {string} call          the ask_user call's id
 * @property {string} question
 * @property {string[]} [options]
 * @property {string} rule          "never: delete", "rules error", a rule's label ("rules.md:12") or "model"
 * @property {string} [ruleText]
 * @property {"answered" | "asked-you" | "answered-first" | "you-answered"} decision   answered-first: a person's
 *   answer came before; you-answered: the person answered a question the supervisor left to them (closes the breaker)
 * @property {string} [answer]
 * @property {string} [note]        "asked you because: ..."
 * @property {number} ms            question -> answer delivered (or -> the note)
 * @property {number} [tokens]      the supervisor model's spend for this question
 * @property {number} [cost]
 * @property {string} [model]
 */

/** @param {string} storeDir */
export const supervisorLogPath = (storeDir) => join(storeDir, SUPERVISOR_LOG);

/** @param {string} storeDir @param {SupervisorLine} line */
export function appendSupervisorLine(storeDir, line) {
	appendNoFollow(supervisorLogPath(storeDir), `${JSON.stringify(line)}\n`);
}

/** @param {unknown} value @returns {value is SupervisorLine} */
function isLine(value) {
	const v = /** @type {Record<string, unknown>} */ (value);
	return (
		!!v &&
		typeof v === "object" &&
		typeof v.at === "number" &&
		typeof v.row === "string" &&
		typeof v.run === "string" &&
		typeof v.call === "string" &&
		typeof v.question === "string" &&
		typeof v.rule === "string" &&
		typeof v.decision === "string"
	);
}

/**
 * Every line since `since` (ms), oldest first; a missing log is empty.
 * @param {string} storeDir @param {number} [since]
 * @returns {SupervisorLine[]}
 */
export function readSupervisorLog(storeDir, since = 0) {
	let text;
	try {
		text = readFileSync(supervisorLogPath(storeDir), "utf8");
	} catch {
		return [];
	}
	/** @type {SupervisorLine[]} */
	const lines = [];
	for (const part of text.split("\n")) {
		if (!part) continue;
		try {
			const value = JSON.parse(part);
			if (isLine(value) && value.at >= since) lines.push(value);
		} catch {
			// A torn line.
		}
	}
	return lines;
}
