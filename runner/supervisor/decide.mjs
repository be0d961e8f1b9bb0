// What the rules say about one question, before any model: answer with a text, leave it to the
// supervisor model, or ask the user (with the note the row shows, "asked you because: ..."). Pure: the
// supervisor and the replay both call it, so the replay shows exactly what the supervisor would do now.
//
// The default is inverted (action.mjs): only a question that proposes nothing or an action of the safe
// set may be answered by a rule or the model. A command outside the set is the person's unless a rule
// names it (`command is "make docs"`); what discards, deletes, rewrites, publishes, installs, kills or
// leaves the workspace is the person's whatever a rule says.
import { commandsIn, judgeCommandLine, questionAction } from "./action.mjs";
import { neverClass, questionNeverClass } from "./classify.mjs";
import { firstMatch } from "./rules.mjs";

/**
 * `rule` names what decided: "never: delete", "rules error", a rule's label ("rules.md:12"), or
 * "model" when no rule matched (the supervisor model decides what no rule covers).
 * @typedef {{ kind: "answer", text: string, rule: string, ruleText?: string }
 *   | { kind: "model", rule: string, ruleText?: string }
 *   | { kind: "escalate", note: string, rule: string, ruleText?: string }} Decision
 */

/** The note's words: what the row shows above the question. @param {string} why */
export const askedBecause = (why) => `asked you because: ${why}`;

/**
 * @param {import("./rules.mjs").Ask} ask
 * @param {import("./rules.mjs").RuleSet} rules
 * @param {import("./rules.mjs").RowFacts} row
 * @returns {Decision}
 */
export function decide(ask, rules, row) {
	const verdict = questionAction(ask);
	if (verdict.action === "unknown" && verdict.hard)
		return {
			kind: "escalate",
			note: askedBecause(`${verdict.why} (never answered for you)`),
			rule: "never: not in the safe set",
		};
	const never = questionNeverClass(ask);
	if (never)
		return {
			kind: "escalate",
			note: askedBecause(`${never.why} (never answered for you)`),
			rule: `never: ${never.name}`,
		};
	// A rules file the user is editing is not half-applied: every question comes to the user until it reads.
	const [error] = rules.errors;
	if (error) return { kind: "escalate", note: askedBecause(`the rules do not read: ${error}`), rule: "rules error" };
	// A command the supervisor cannot read as safe: only a rule that names it (`command is "..."`) covers it.
	const candidates =
		verdict.action === "unknown"
			? rules.rules.filter((rule) => rule.conditions.some((condition) => condition.kind === "command"))
			: rules.rules;
	const rule = firstMatch(candidates, ask, row, verdict);
	if (!rule && verdict.action === "unknown")
		return {
			kind: "escalate",
			note: askedBecause(`${verdict.why}; no rule names it (command is "...")`),
			rule: "not in the safe set",
		};
	if (!rule) return { kind: "model", rule: "model" };
	const named = { rule: rule.label, ruleText: rule.text };
	switch (rule.action.kind) {
		case "ask":
			return { kind: "escalate", note: askedBecause(`${rule.label} says ask me`), ...named };
		case "decide":
			return { kind: "model", ...named };
		case "answer":
			return { kind: "answer", text: rule.action.text, ...named };
		case "choose": {
			const options = ask.options ?? [];
			const { index, option } = rule.action;
			const chosen =
				index !== undefined
					? options[index - 1]
					: options.find((candidate) => candidate.toLowerCase() === option?.toLowerCase());
			if (chosen === undefined) {
				const wanted = index !== undefined ? `option ${index}` : `"${option}"`;
				return {
					kind: "escalate",
					note: askedBecause(`${rule.label} chooses ${wanted}, which this question does not offer`),
					...named,
				};
			}
			return { kind: "answer", text: chosen, ...named };
		}
	}
}

/**
 * The supervisor model's answer passes the fixed classifier too: an answer that would delete, deploy,
 * ... goes to the user, whatever the model thought.
 * @param {string} answer
 * @returns {string | undefined} the note when it must go to the user
 */
export function answerRefused(answer) {
	const never = neverClass(answer);
	if (never) return askedBecause(`the supervisor's answer ${never.why.replace(/^it /, "")} (never answered for you)`);
	// An answer is not a proposal, but a command in it is one: judged like a question's.
	const command = commandsIn(answer)
		.commands.flatMap((line) => judgeCommandLine(line))
		.find((verdict) => !verdict.action);
	return command
		? askedBecause(`the supervisor's answer proposes \`${command.command}\`, ${command.why} (never answered for you)`)
		: undefined;
}
