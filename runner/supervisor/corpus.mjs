// The supervisor measured against a labelled corpus of questions (tests/fixtures/supervisor-corpus.jsonl:
// one JSON object a line, { label: "destructive" | "routine", kind, question, options? }): how many of each
// kind the rules answer and how many come to the person, under the rules a tired person writes
// (`- always: answer "yes"`) and under the model (`- always: decide` with a model that says yes to
// everything). Pure: the replay subcommand, the bench and a unit test print and check the same figures.
import { answerRefused, decide } from "./decide.mjs";
import { parseRules } from "./rules.mjs";

/** @typedef {{ label: "destructive" | "routine", kind: string, question: string, options?: string[] }} CorpusEntry */
/** @typedef {{ label: string, kind: string, total: number, answered: number, asked: number }} Tally */

/** The two rule sets measured, by name. */
export const CORPUS_RULES = /** @type {const} */ ({
	yes: { title: 'yes to everything (- always: answer "yes")', text: '## Rules\n- always: answer "yes"\n' },
	model: { title: "the model (- always: decide; a model that answers yes)", text: "## Rules\n- always: decide\n" },
});

/**
 * Reads a corpus file's text; a line that is not an entry is an error naming the line.
 * @param {string} text @param {string} name
 * @returns {CorpusEntry[]}
 */
export function parseCorpus(text, name) {
	/** @type {CorpusEntry[]} */
	const entries = [];
	text.split("\n").forEach((line, index) => {
		if (!line.trim()) return;
		/** @type {Record<string, unknown>} */
		let value;
		try {
			value = JSON.parse(line);
		} catch {
			throw new Error(`${name}:${index + 1}: not a JSON line`);
		}
		const options = value?.options;
		if (
			(value?.label !== "destructive" && value?.label !== "routine") ||
			typeof value.kind !== "string" ||
			typeof value.question !== "string" ||
			(options !== undefined && !(Array.isArray(options) && options.every((o) => typeof o === "string")))
		)
			throw new Error(
				`${name}:${index + 1}: an entry is {"label":"destructive"|"routine","kind":"...","question":"..."}`,
			);
		entries.push(/** @type {CorpusEntry} */ (value));
	});
	return entries;
}

/**
 * Whether the supervisor would answer the entry for the person under the rules; the model, when the
 * rules leave it to the model, answers `modelAnswer` (and its answer passes the same check as in the runner).
 * @param {CorpusEntry} entry @param {import("./rules.mjs").RuleSet} rules @param {string} modelAnswer
 */
export function answeredFor(entry, rules, modelAnswer) {
	const ask = { question: entry.question, ...(entry.options ? { options: entry.options } : {}) };
	const decision = decide(ask, rules, {});
	if (decision.kind === "answer") return true;
	if (decision.kind === "escalate") return false;
	return answerRefused(modelAnswer) === undefined;
}

/**
 * Per label and kind, then per label: answered and asked, under one rules text.
 * @param {readonly CorpusEntry[]} entries @param {string} rulesText @param {string} [modelAnswer]
 * @returns {{ kinds: Tally[], labels: Tally[], missed: CorpusEntry[] }}
 */
export function measureCorpus(entries, rulesText, modelAnswer = "yes") {
	const rules = parseRules(rulesText, "corpus-rules.md");
	/** @type {Map<string, Tally>} */
	const kinds = new Map();
	/** @type {Map<string, Tally>} */
	const labels = new Map();
	/** @type {CorpusEntry[]} */
	const missed = [];
	for (const entry of entries) {
		const answered = answeredFor(entry, rules, modelAnswer);
		for (const [map, key, kind] of /** @type {const} */ ([
			[kinds, `${entry.label}/${entry.kind}`, entry.kind],
			[labels, entry.label, "all"],
		])) {
			const tally = map.get(key) ?? { label: entry.label, kind, total: 0, answered: 0, asked: 0 };
			tally.total++;
			if (answered) tally.answered++;
			else tally.asked++;
			map.set(key, tally);
		}
		if (answered === (entry.label === "destructive")) missed.push(entry);
	}
	return { kinds: [...kinds.values()], labels: [...labels.values()], missed };
}

/** @param {number} part @param {number} whole */
const percent = (part, whole) => (whole ? `${((100 * part) / whole).toFixed(1)}%` : "-");

/**
 * The table the replay and the bench print: per kind, answered and asked under both rule sets.
 * @param {readonly CorpusEntry[]} entries @param {string} name
 */
export function formatCorpus(entries, name) {
	const yes = measureCorpus(entries, CORPUS_RULES.yes.text);
	const model = measureCorpus(entries, CORPUS_RULES.model.text);
	const head = ["CLASS", "KIND", "N", "YES: ANSWERED", "ASKED YOU", "MODEL: ANSWERED", "ASKED YOU"];
	const rows = yes.kinds.map((tally, i) => {
		const other = model.kinds[i] ?? tally;
		return [tally.label, tally.kind, tally.total, tally.answered, tally.asked, other.answered, other.asked].map(
			String,
		);
	});
	const totals = yes.labels.map((tally, i) => {
		const other = model.labels[i] ?? tally;
		return [
			tally.label,
			"all",
			String(tally.total),
			`${tally.answered} (${percent(tally.answered, tally.total)})`,
			String(tally.asked),
			`${other.answered} (${percent(other.answered, other.total)})`,
			String(other.asked),
		];
	});
	const all = [head, ...rows, ...totals];
	const widths = head.map((_, i) => Math.max(...all.map((cells) => cells[i]?.length ?? 0)));
	const line = (/** @type {string[]} */ cells) =>
		cells
			.map((cell, i) => (i < 2 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
			.join("  ")
			.trimEnd();
	const destructive = yes.labels.find((tally) => tally.label === "destructive");
	const routine = yes.labels.find((tally) => tally.label === "routine");
	return [
		`${name}: ${entries.length} questions (${destructive?.total ?? 0} destructive, ${routine?.total ?? 0} routine)`,
		`YES: ${CORPUS_RULES.yes.title}; MODEL: ${CORPUS_RULES.model.title}`,
		"",
		line(head),
		...rows.map(line),
		"",
		...totals.map(line),
		...[...new Set([...yes.missed, ...model.missed])].map(
			(entry) =>
				`  ${entry.label === "destructive" ? "answered, destructive" : "asked, routine"}: ${entry.question}`,
		),
	].join("\n");
}
