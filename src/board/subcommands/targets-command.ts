/**
 * `/agent-board targets ...`: list, add, check, remove, as plain text for scripts and non-TUI modes.
 * Parsing is pure and refuses bad input before anything runs; the subcommand table wires it in.
 */
import { fieldsOf, type TargetKind } from "../../../runner/kinds/kind.mjs";
import { allKinds, selectorUsage } from "../../../runner/kinds/kinds.mjs";
import { sanitizeText } from "../engine/sanitize.ts";
import { targetLoad, targetState } from "../view-model/target-text.ts";
import { changedText, parseTargetsChange, type TargetsChangeParsed } from "./targets-set-command.ts";
import type { BoardService, CheckItem, CheckProgress, TargetCheck, TargetInput, TargetView } from "../engine/types.ts";

export type TargetsParsed =
	| { ok: true; action: "list" }
	| { ok: true; action: "add"; name: string; input: TargetInput }
	| { ok: true; action: "check"; name: string; install: boolean }
	| { ok: true; action: "remove"; name: string }
	| TargetsChangeParsed;

/** Words as a shell would split them: '...' and "..." keep spaces (--pi "node /opt/pi/cli.js"). */
export function splitWords(text: string): string[] | string {
	const words: string[] = [];
	let current = "";
	let quote = "";
	let inWord = false;
	for (const char of text) {
		if (quote) {
			if (char === quote) quote = "";
			else current += char;
		} else if (char === "'" || char === '"') {
			quote = char;
			inWord = true;
		} else if (/\s/.test(char)) {
			if (inWord) words.push(current);
			current = "";
			inWord = false;
		} else {
			current += char;
			inWord = true;
		}
	}
	if (quote) return `unclosed ${quote} quote`;
	if (inWord) words.push(current);
	return words;
}

/** Every flag `targets add` takes, with the kinds that have it and the field it sets. */
function addFlags(): Map<string, { field: string; type: string; kinds: TargetKind[] }> {
	const flags = new Map<string, { field: string; type: string; kinds: TargetKind[] }>();
	for (const kind of allKinds()) {
		for (const [field, spec] of fieldsOf(kind)) {
			if (!spec.flag) continue;
			const known = flags.get(spec.flag) ?? { field, type: spec.type, kinds: [] };
			known.kinds.push(kind);
			flags.set(spec.flag, known);
		}
	}
	return flags;
}

function number(value: string, flag: string): number | string {
	return /^\d+(\.\d+)?$/.test(value) ? Number(value) : `${flag} needs a number, got ${JSON.stringify(value)}`;
}

/** "a or b", "a, b or c" */
const either = (words: string[]) =>
	words.length < 2 ? words.join("") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;

function parseAdd(words: string[]): TargetsParsed {
	const [name, ...rest] = words;
	if (!name || name.startsWith("--")) return { ok: false, error: "targets add needs a name" };
	const known = addFlags();
	const given = new Map<string, string | string[]>();
	for (let i = 0; i < rest.length; i += 2) {
		const flag = rest[i] ?? "";
		const spec = known.get(flag);
		if (!spec) return { ok: false, error: `targets add: unknown option ${JSON.stringify(flag)}` };
		// A flag without a value (--dir-absolute) takes no word after it.
		if (spec.type === "flag") i -= 1;
		const value = spec.type === "flag" ? "true" : rest[i + 1];
		if (value === undefined) return { ok: false, error: `targets add: ${flag} needs a value` };
		const before = given.get(flag);
		// A list field (--env) takes the flag again; any other flag once.
		if (spec.type === "words" && spec.field === "env")
			given.set(flag, [...(Array.isArray(before) ? before : []), value]);
		else if (before !== undefined) return { ok: false, error: `targets add: ${flag} given twice` };
		else given.set(flag, value);
	}
	const selected = allKinds().filter((kind) =>
		fieldsOf(kind).some(([, spec]) => spec.selects && spec.flag && given.has(spec.flag)),
	);
	const [kind] = selected;
	if (!kind || selected.length > 1)
		return { ok: false, error: `targets add needs exactly one of ${either(allKinds().map(selectorUsage))}` };
	const own = new Map(
		fieldsOf(kind).flatMap(([field, spec]) => (spec.flag ? [[spec.flag, { field, spec }] as const] : [])),
	);
	const stray = [...given.keys()].find((flag) => !own.has(flag));
	if (stray)
		return {
			ok: false,
			error: `targets add ${selectorUsage(kind).split(" ")[0]}: ${stray} is for ${either((known.get(stray)?.kinds ?? []).map((k) => k.what))} targets`,
		};
	const input: TargetInput = { kind: kind.kind };
	for (const [flag, { field, spec }] of own) {
		const value = given.get(flag);
		if (value === undefined) {
			if (spec.required && spec.default === undefined)
				return { ok: false, error: `targets add ${selectorUsage(kind).split(" ")[0]} needs ${flag} ${spec.value}` };
			continue;
		}
		if (spec.type === "number") {
			const parsed = number(String(value), flag);
			if (typeof parsed === "string") return { ok: false, error: parsed };
			input[field] = parsed;
		} else if (spec.type === "flag") input[field] = true;
		else input[field] = value;
	}
	return { ok: true, action: "add", name, input };
}

/** `rest`: what follows `targets`. */
export function parseTargetsCommand(rest: string): TargetsParsed {
	const words = splitWords(rest);
	if (typeof words === "string") return { ok: false, error: `targets: ${words}` };
	const [action, ...args] = words;
	if (action === undefined) return { ok: true, action: "list" };
	if (action === "add") return parseAdd(args);
	if (action === "check" || action === "remove") {
		const [name, ...flags] = args;
		if (!name || name.startsWith("--")) return { ok: false, error: `targets ${action} needs a target's name` };
		const allowed = action === "check" ? ["--install"] : [];
		const stray = flags.find((flag) => !allowed.includes(flag));
		if (stray !== undefined) return { ok: false, error: `targets ${action}: unexpected ${JSON.stringify(stray)}` };
		return action === "check"
			? { ok: true, action, name, install: flags.includes("--install") }
			: { ok: true, action, name };
	}
	if (action === "set" || action === "drain" || action === "undrain") return parseTargetsChange(action, args);
	return {
		ok: false,
		error: `targets: unknown action ${JSON.stringify(action)} (add, check, remove, set, drain, undrain)`,
	};
}

/** The targets as a table: name, where, running/max, queued, the far side's load, and whether it can be reached. */
export function formatTargets(views: readonly TargetView[]): string {
	const rows = views.map((view) => [
		view.name,
		sanitizeText(view.where),
		`${view.running}/${view.max}`,
		String(view.queued),
		targetLoad(view),
		targetState(view),
	]);
	const header = ["TARGET", "WHERE", "RUNNING", "QUEUED", "LOAD", "STATE"];
	const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? "").length)));
	const line = (cells: string[]) =>
		cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ");
	return [line(header), ...rows.map(line)].join("\n");
}

/** Names are padded to this at least, so lines shown as they come line up with the report's. */
const NAME_WIDTH = 11;

/** One requirement's line, its fix under it. */
export function checkLines(item: CheckItem, width = NAME_WIDTH): string[] {
	return [
		`${item.ok ? "ok  " : "FAIL"}  ${item.name.padEnd(width)}  ${sanitizeText(item.detail)}`,
		...(item.fix && !item.ok ? [`      ${"".padEnd(width)}  fix: ${sanitizeText(item.fix)}`] : []),
	];
}

/** One line per requirement, its fix under it; the verdict last. */
export function formatCheck(check: TargetCheck): string {
	const width = Math.max(NAME_WIDTH, ...check.items.map((item) => item.name.length));
	const problems = check.items.filter((item) => !item.ok).length;
	return [
		...check.items.flatMap((item) => checkLines(item, width)),
		check.ok
			? `${check.target}: ready`
			: `${check.target}: not ready (${problems} problem${problems === 1 ? "" : "s"})`,
	].join("\n");
}

/** A report whose verdict is a failure (a target not ready): shown as the report it is, and the command fails (headless: exit 1). */
export class FailedReport extends Error {
	readonly report: string;
	constructor(report: string) {
		super(report);
		this.name = "FailedReport";
		this.report = report;
	}
}

/** The check's lines as they come, for `progress` (what it is checking now last). */
function checkProgress(progress: (lines: string[], checking?: string) => void): CheckProgress {
	const lines: string[] = [];
	let checking: string | undefined;
	return {
		checking(what) {
			checking = what;
			progress([...lines], sanitizeText(what));
		},
		item(item) {
			lines.push(...checkLines(item));
			progress([...lines], checking === undefined ? undefined : sanitizeText(checking));
		},
	};
}

export async function runTargetsCommand(
	service: BoardService,
	parsed: Extract<TargetsParsed, { ok: true }>,
	progress?: (lines: string[], checking?: string) => void,
): Promise<string> {
	switch (parsed.action) {
		case "list":
			return formatTargets(await service.targets.list());
		case "add": {
			const view = await service.targets.add(parsed.name, parsed.input);
			return `added target ${view.name}: ${sanitizeText(view.where)}, up to ${view.max} at a time\ncheck it: /agent-board targets check ${view.name}${view.checkArgs ? ` ${view.checkArgs}` : ""}`;
		}
		case "check": {
			const check = await service.targets.check(parsed.name, {
				install: parsed.install,
				...(progress ? { progress: checkProgress(progress) } : {}),
			});
			const text = formatCheck(check);
			// A failed check fails the command (headless: exit 1), its report shown as one.
			if (!check.ok) throw new FailedReport(text);
			return text;
		}
		case "remove":
			await service.targets.remove(parsed.name);
			return `removed target ${parsed.name}`;
		case "set":
			return changedText("set", await service.targets.set(parsed.name, parsed.given));
		case "drain":
		case "undrain":
			return changedText(parsed.action, await service.targets.drain(parsed.name, parsed.action === "drain"));
	}
}
