// The fixed classifier: which questions are never answered for the user, whatever the rules say
// (anything that deletes, force-pushes, deploys, spends money, touches credentials or leaves the
// workspace), and which routine class a question is (confirm, choice, open) for the rules' `class is`.
// Pure and deliberately eager: a false alarm costs the user one answer, a miss could cost their data.

/** The classes never auto-answered, each with the words that say it and the note the row shows. */
export const NEVER_CLASSES = /** @type {const} */ ([
	{
		name: "delete",
		why: "it may delete something",
		pattern:
			/\b(delet\w*|drop\s+([\w.-]+\s+){0,3}(tables?|databases?|db|schemas?|collections?|index|indexes)|truncat\w*|wip(e|es|ed|ing)|eras\w*|purg\w*|destroy\w*|rm\s+-\w*[rf]|git\s+clean|reset\s+--hard|remov\w*\s+([\w.-]+\s+){0,3}(file|files|folder|folders|director\w*|branch\w*|database|db|table|data|records?|rows?|volumes?|buckets?|backups?|users?|accounts?))\b/i,
	},
	{
		name: "force-push",
		why: "it may force-push or rewrite history",
		pattern:
			/\b(force[- ]?push\w*|push\s+(-f|--force\S*)|--force-with-lease|rewrit\w*\s+(the\s+)?(git\s+)?history|filter-branch)\b/i,
	},
	{
		name: "deploy",
		why: "it may deploy or publish",
		pattern:
			/\b(deploy\w*|releas\w*\s+to|publish\w*|go(es)?\s+live|roll\s*out|rollout|kubectl\s+(apply|delete|rollout)|terraform\s+(apply|destroy)|prod|production|ship\s+it)\b/i,
	},
	{
		name: "spend",
		why: "it may spend money",
		pattern:
			/(\b(buy\w*|purchas\w*|pay|paying|payment\w*|billing|subscri\w*|credit\s+card|invoice\w*|charg(e|ed|es|ing)|upgrad\w*\s+(the\s+|our\s+|my\s+)?(plan|tier|account)|spend\w*\s+(money|credits?|budget|funds)|paid\s+(plan|tier|api|service))\b|[$€£]\s?\d)/i,
	},
	{
		name: "credentials",
		why: "it touches credentials",
		pattern:
			/(\b(passwords?|passwd|secrets?|api[\s_-]?keys?|credentials?|private\s+keys?|ssh\s+keys?|access\s+keys?|auth\s+tokens?|access\s+tokens?|tokens?\s+for|certificates?|keychain|keyring|oauth|2fa|otp)\b|\.env\b|auth\.json|id_rsa|id_ed25519)/i,
	},
	{
		name: "outside-workspace",
		why: "it reaches outside the workspace",
		pattern:
			/(\b(outside\s+(of\s+)?(the\s+|this\s+)?(workspace|repo\w*|project|worktree|directory|folder)|home\s+director\w*|system[- ]wide|globally|--global|sudo|other\s+repo\w*|parent\s+director\w*|npm\s+(i|install)\s+-g)\b|(^|[\s'"`(])(~\/|\/etc\/|\/usr\/|\/var\/|\.\.\/))/i,
	},
]);

/** @typedef {(typeof NEVER_CLASSES)[number]["name"]} NeverClass */
/** @typedef {"confirm" | "choice" | "open"} RoutineClass */

export const ROUTINE_CLASSES = /** @type {const} */ (["confirm", "choice", "open"]);
export const CLASS_NAMES = /** @type {readonly string[]} */ ([...ROUTINE_CLASSES, ...NEVER_CLASSES.map((c) => c.name)]);

/**
 * The first never-auto class the text falls in, or undefined.
 * @param {string} text
 * @returns {{ name: NeverClass, why: string } | undefined}
 */
export function neverClass(text) {
	for (const entry of NEVER_CLASSES) if (entry.pattern.test(text)) return { name: entry.name, why: entry.why };
	return undefined;
}

/**
 * A question's never-auto class, read from the question and every option (an option "yes, drop the
 * table" makes the question one that deletes).
 * @param {{ question: string, options?: readonly string[] }} ask
 */
export function questionNeverClass(ask) {
	return neverClass([ask.question, ...(ask.options ?? [])].join("\n"));
}

/**
 * The routine class: `choice` when it offers options or asks which/or; `confirm` for a yes/no
 * question ("should I", "shall I", "proceed?", "ok to"); `open` otherwise.
 * @param {{ question: string, options?: readonly string[] }} ask
 * @returns {RoutineClass}
 */
export function routineClass(ask) {
	const q = ask.question.trim();
	const yesNo = (ask.options ?? []).every((option) => /^(y|yes|n|no|ok|okay|cancel)\b/i.test(option.trim()));
	if ((ask.options?.length ?? 0) > 0 && !yesNo) return "choice";
	if (
		/^(should|shall|can|could|may|do|does|did|is|are|am|will|would|want|ok|okay)\b/i.test(q) ||
		/\b(proceed|continue|go ahead|ok to|okay to|confirm)\b/i.test(q)
	)
		return "confirm";
	if (/\b(which|what|whether)\b/i.test(q) || /\bor\b/i.test(q)) return "choice";
	return "open";
}
