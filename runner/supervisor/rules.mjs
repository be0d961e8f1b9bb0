// A rules file (rules.md): plain words for the supervisor model, and one structured part, the list under
// a heading "Rules". Each item is one rule, `when <condition> [and <condition>]: <action>` (or
// `always: <action>`), tried in order, the first that matches acts. Pure parsing and matching; the
// files are read by rules-files.mjs. A line that does not parse is an error naming file and line.
//
//   conditions: class is confirm|choice|open|delete|...   question says "text" [or "text"]
//               question matches /regex/flags             row is <id or name>   target is <name>   preset is <name>
//               action is test-run|format|...             command is "make docs" [or "..."]
//   actions:    answer "text"   choose 2 | choose "option"   decide (the supervisor model)   ask me
import { SAFE_ACTIONS, questionAction } from "./action.mjs";
import { CLASS_NAMES, questionNeverClass, routineClass } from "./classify.mjs";

/** Plain words given to the model at most, per file. */
const WORDS_CHARS = 8000;

/**
 * @typedef {{ kind: "class" | "says" | "row" | "target" | "preset" | "action" | "command", values: string[] } | { kind: "matches", regex: RegExp }} Condition
 * @typedef {{ kind: "answer", text: string } | { kind: "choose", index?: number, option?: string } | { kind: "decide" } | { kind: "ask" }} Action
 * @typedef {{ label: string, text: string, conditions: Condition[], action: Action }} Rule
 * @typedef {{ rules: Rule[], words: string, errors: string[] }} RuleSet
 * @typedef {{ question: string, options?: readonly string[] }} Ask
 * `member` is the pool member a pool's row runs on (`target` is the pool): `target is` matches either.
 * @typedef {{ rowId?: string, rowName?: string, target?: string, member?: string, preset?: string }} RowFacts
 */

/**
 * Words, "quoted strings" and, after `matches`, /regex/flags.
 * @param {string} text
 * @returns {{ tokens: Array<{ word?: string, quoted?: string, regex?: RegExp }>, error?: string }}
 */
function tokenize(text) {
	/** @type {Array<{ word?: string, quoted?: string, regex?: RegExp }>} */
	const tokens = [];
	let i = 0;
	while (i < text.length) {
		const c = text[i] ?? "";
		if (/\s/.test(c)) {
			i++;
			continue;
		}
		if (c === '"') {
			let out = "";
			i++;
			while (i < text.length && text[i] !== '"') {
				if (text[i] === "\\" && i + 1 < text.length) i++;
				out += text[i];
				i++;
			}
			if (i >= text.length) return { tokens, error: "a quote is not closed" };
			i++;
			tokens.push({ quoted: out });
			continue;
		}
		if (c === "/" && tokens.at(-1)?.word?.toLowerCase() === "matches") {
			let body = "";
			i++;
			while (i < text.length && text[i] !== "/") {
				if (text[i] === "\\" && i + 1 < text.length) body += text[i++];
				body += text[i];
				i++;
			}
			if (i >= text.length) return { tokens, error: "a /regex/ is not closed" };
			i++;
			const flags = /^[a-z]*/.exec(text.slice(i))?.[0] ?? "";
			i += flags.length;
			try {
				tokens.push({ regex: new RegExp(body, flags.replace(/[gy]/g, "")) });
			} catch (error) {
				return { tokens, error: `bad regex /${body}/: ${error instanceof Error ? error.message : String(error)}` };
			}
			continue;
		}
		const word = /^[^\s"]+/.exec(text.slice(i))?.[0] ?? c;
		tokens.push({ word });
		i += word.length;
	}
	return { tokens };
}

/** The index of the first ":" outside quotes and regexes, or -1. @param {string} text */
function actionColon(text) {
	let quoted = false;
	for (let i = 0; i < text.length; i++) {
		const c = text[i];
		if (c === "\\" && quoted) i++;
		else if (c === '"') quoted = !quoted;
		else if (c === "/" && !quoted && /matches\s*$/i.test(text.slice(0, i))) {
			const end = text.indexOf("/", i + 1);
			if (end < 0) return -1;
			i = end;
		} else if (c === ":" && !quoted) return i;
	}
	return -1;
}

/** @param {string} text @returns {Condition[] | string} */
function parseConditions(text) {
	const lowered = text.trim().toLowerCase();
	if (["always", "otherwise", "anything", "when anything", "everything"].includes(lowered)) return [];
	const body = text.trim().replace(/^when\s+/i, "");
	if (body === text.trim()) return `a rule starts with "when" (or is "always: ...")`;
	const { tokens, error } = tokenize(body);
	if (error) return error;
	/** @type {Condition[]} */
	const conditions = [];
	let i = 0;
	const word = (/** @type {number} */ k) => tokens[k]?.word?.toLowerCase();
	while (i < tokens.length) {
		const subject = word(i);
		const verb = word(i + 1);
		if (subject === "question" && verb === "matches") {
			const regex = tokens[i + 2]?.regex;
			if (!regex) return `"question matches" needs a /regex/`;
			conditions.push({ kind: "matches", regex });
			i += 3;
		} else if (
			(subject === "question" && verb === "says") ||
			(["class", "row", "target", "preset", "action", "command"].includes(subject ?? "") && verb === "is")
		) {
			const kind = /** @type {"says" | "class" | "row" | "target" | "preset" | "action" | "command"} */ (
				subject === "question" ? "says" : subject
			);
			/** @type {string[]} */
			const values = [];
			i += 2;
			for (;;) {
				const token = tokens[i];
				const quotedOnly = kind === "says" || kind === "command";
				const value = token?.quoted ?? (quotedOnly ? undefined : token?.word);
				if (value === undefined || (kind === "command" && !value.trim()))
					return quotedOnly ? `"${subject} ${verb}" needs "quoted text"` : `"${subject} is" needs a value`;
				values.push(kind === "class" || kind === "action" ? value.toLowerCase() : value.trim());
				i++;
				if (word(i) !== "or") break;
				i++;
			}
			const unknown = kind === "class" ? values.find((value) => !CLASS_NAMES.includes(value)) : undefined;
			if (unknown) return `unknown class "${unknown}" (classes: ${CLASS_NAMES.join(", ")})`;
			const action =
				kind === "action"
					? values.find((value) => !SAFE_ACTIONS.includes(/** @type {never} */ (value)))
					: undefined;
			if (action)
				return `unknown action "${action}" (actions that may be answered: ${SAFE_ACTIONS.join(", ")}; allow one command by name with command is "...")`;
			conditions.push({ kind, values });
		} else {
			const seen = tokens[i]?.word ?? tokens[i]?.quoted ?? "";
			return `cannot read "${seen}": conditions are class is, action is, command is, question says, question matches, row is, target is, preset is`;
		}
		if (i < tokens.length) {
			if (word(i) !== "and") return `conditions are joined with "and"`;
			i++;
		}
	}
	return conditions.length ? conditions : 'a rule needs a condition (or is "always: ...")';
}

/** @param {string} text @returns {Action | string} */
function parseAction(text) {
	const trimmed = text.trim();
	const head = trimmed.split(/\s+/)[0] ?? "";
	const verb = head.toLowerCase();
	const tail = trimmed.slice(head.length).trim();
	if (verb === "decide" && !tail) return { kind: "decide" };
	if (verb === "ask" && (!tail || tail.toLowerCase() === "me")) return { kind: "ask" };
	if (verb === "answer") {
		const { tokens, error } = tokenize(tail);
		if (error) return error;
		const text = tokens.length === 1 && tokens[0]?.quoted !== undefined ? tokens[0].quoted : tail;
		return text ? { kind: "answer", text } : `"answer" needs the text to answer with`;
	}
	if (verb === "choose") {
		if (/^\d+$/.test(tail) && Number(tail) >= 1) return { kind: "choose", index: Number(tail) };
		const { tokens } = tokenize(tail);
		if (tokens.length === 1 && tokens[0]?.quoted) return { kind: "choose", option: tokens[0].quoted };
		return `"choose" needs an option's number (1, 2, ...) or its "quoted text"`;
	}
	return `cannot read the action "${trimmed}": actions are answer "text", choose N, decide, ask me`;
}

/**
 * Parses one rules file. `name` labels its rules ("rules.md:12").
 * @param {string} text @param {string} name
 * @returns {RuleSet}
 */
export function parseRules(text, name) {
	/** @type {Rule[]} */
	const rules = [];
	/** @type {string[]} */
	const errors = [];
	/** @type {string[]} */
	const words = [];
	let inRules = false;
	const lines = text.split(/\r?\n/);
	lines.forEach((line, index) => {
		const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
		if (heading) {
			inRules = /^rules$/i.test(heading[2] ?? "");
			if (!inRules) words.push(line);
			return;
		}
		if (!inRules) {
			words.push(line);
			return;
		}
		const item = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/.exec(line);
		if (!item) {
			if (line.trim())
				errors.push(`${name}:${index + 1}: under "Rules" each line is one rule, a list item ("- when ...: ...")`);
			return;
		}
		const body = (item[1] ?? "").trim();
		const colon = actionColon(body);
		if (colon < 0) {
			errors.push(`${name}:${index + 1}: a rule is "when <condition>: <action>"`);
			return;
		}
		const conditions = parseConditions(body.slice(0, colon));
		const action = parseAction(body.slice(colon + 1));
		if (typeof conditions === "string" || typeof action === "string") {
			errors.push(`${name}:${index + 1}: ${typeof conditions === "string" ? conditions : action}`);
			return;
		}
		rules.push({ label: `${name}:${index + 1}`, text: body, conditions, action });
	});
	const plain = words.join("\n").trim();
	return { rules, errors, words: plain.length > WORDS_CHARS ? `${plain.slice(0, WORDS_CHARS)}…` : plain };
}

/** Several files as one set, in order (the first matching rule wins). @param {RuleSet[]} sets @returns {RuleSet} */
export function joinRules(sets) {
	return {
		rules: sets.flatMap((set) => set.rules),
		errors: sets.flatMap((set) => set.errors),
		words: sets
			.map((set) => set.words)
			.filter(Boolean)
			.join("\n\n"),
	};
}

/** @param {string} a @param {string | undefined} b */
const same = (a, b) => b !== undefined && a.toLowerCase() === b.toLowerCase();

/** Whether a command starts with a named prefix, word for word. @param {string} command @param {string} prefix */
const startsWith = (command, prefix) => {
	const words = command.trim().split(/\s+/);
	const want = prefix.trim().split(/\s+/);
	return want.every((word, i) => words[i] === word);
};

/**
 * Whether one condition holds for the question asked on this row.
 * @param {Condition} condition @param {Ask} ask @param {RowFacts} row
 * @param {import("./action.mjs").ActionVerdict} verdict
 */
function holds(condition, ask, row, verdict) {
	const text = [ask.question, ...(ask.options ?? [])].join("\n");
	switch (condition.kind) {
		case "matches":
			return condition.regex.test(text);
		case "says":
			return condition.values.some((value) => text.toLowerCase().includes(value.toLowerCase()));
		case "class": {
			const classes = [routineClass(ask), questionNeverClass(ask)?.name];
			return condition.values.some((value) => classes.includes(/** @type {never} */ (value)));
		}
		case "action":
			return condition.values.includes(verdict.action);
		case "command":
			// Every command the supervisor could not read as safe is one the rule names.
			return (
				verdict.commands.length > 0 &&
				condition.values.some((value) => verdict.commands.some((command) => startsWith(command, value))) &&
				verdict.unknown.every((command) => condition.values.some((value) => startsWith(command, value)))
			);
		case "row":
			return condition.values.some(
				(value) =>
					same(value, row.rowId) ||
					same(value, row.rowName) ||
					(value.length >= 4 && !!row.rowId?.startsWith(value)),
			);
		case "target":
			return condition.values.some((value) => same(value, row.target ?? "local") || same(value, row.member));
		case "preset":
			return condition.values.some((value) => same(value, row.preset));
	}
}

/**
 * The first rule whose every condition holds, or undefined.
 * @param {readonly Rule[]} rules @param {Ask} ask @param {RowFacts} row
 * @param {import("./action.mjs").ActionVerdict} [verdict] what the question proposes
 */
export function firstMatch(rules, ask, row, verdict = questionAction(ask)) {
	return rules.find((rule) => rule.conditions.every((condition) => holds(condition, ask, row, verdict)));
}
