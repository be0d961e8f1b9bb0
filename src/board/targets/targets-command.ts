/**
 * `/agent-board targets ...`: list, add, check, remove, as plain text for scripts and non-TUI modes.
 * Parsing is pure and refuses bad input before anything runs; the subcommand table wires it in.
 */
import { sanitizeText } from "../engine/sanitize.ts";
import type { BoardService } from "../engine/types.ts";
import type { CheckItem, CheckProgress, TargetCheck, TargetInput, TargetView } from "./targets-api.ts";

export type TargetsParsed =
	| { ok: true; action: "list" }
	| { ok: true; action: "add"; name: string; input: TargetInput }
	| { ok: true; action: "check"; name: string; install: boolean }
	| { ok: true; action: "remove"; name: string }
	| { ok: false; error: string };

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

const VALUE_FLAGS = ["--ssh", "--ssh-config", "--dir", "--pi", "--max", "--env", "--container", "--image", "--engine-host", "--network", "--cpus", "--memory"];

function number(value: string, flag: string): number | string {
	return /^\d+(\.\d+)?$/.test(value) ? Number(value) : `${flag} needs a number, got ${JSON.stringify(value)}`;
}

function parseAdd(words: string[]): TargetsParsed {
	const [name, ...rest] = words;
	if (!name || name.startsWith("--")) return { ok: false, error: "targets add needs a name" };
	const flags = new Map<string, string>();
	const env: string[] = [];
	for (let i = 0; i < rest.length; i += 2) {
		const flag = rest[i] ?? "";
		const value = rest[i + 1];
		if (!VALUE_FLAGS.includes(flag)) return { ok: false, error: `targets add: unknown option ${JSON.stringify(flag)}` };
		if (value === undefined) return { ok: false, error: `targets add: ${flag} needs a value` };
		if (flag === "--env") env.push(value);
		else if (flags.has(flag)) return { ok: false, error: `targets add: ${flag} given twice` };
		else flags.set(flag, value);
	}
	const max = flags.has("--max") ? number(flags.get("--max") ?? "", "--max") : undefined;
	if (typeof max === "string") return { ok: false, error: max };
	const common = { ...(max === undefined ? {} : { max }), ...(env.length ? { env } : {}) };
	const ssh = flags.get("--ssh");
	const engine = flags.get("--container");
	if ((ssh === undefined) === (engine === undefined)) return { ok: false, error: "targets add needs exactly one of --ssh <host> or --container docker|podman" };
	const only = (allowed: string[]) => [...flags.keys()].find((flag) => !allowed.includes(flag));
	if (ssh !== undefined) {
		const stray = only(["--ssh", "--ssh-config", "--dir", "--pi", "--max"]);
		if (stray) return { ok: false, error: `targets add --ssh: ${stray} is for container targets` };
		const input: TargetInput = { kind: "ssh", host: ssh, ...common };
		if (flags.has("--ssh-config")) input.sshConfig = flags.get("--ssh-config");
		if (flags.has("--dir")) input.dir = flags.get("--dir");
		if (flags.has("--pi")) input.pi = flags.get("--pi");
		return { ok: true, action: "add", name, input };
	}
	const stray = only(["--container", "--image", "--engine-host", "--network", "--max", "--cpus", "--memory"]);
	if (stray) return { ok: false, error: `targets add --container: ${stray} is for ssh targets` };
	const image = flags.get("--image");
	if (!image) return { ok: false, error: "targets add --container needs --image <image>" };
	const cpus = flags.has("--cpus") ? number(flags.get("--cpus") ?? "", "--cpus") : undefined;
	if (typeof cpus === "string") return { ok: false, error: cpus };
	const input: TargetInput = { kind: "container", engine: engine ?? "", image, ...common, ...(cpus === undefined ? {} : { cpus }) };
	if (flags.has("--engine-host")) input.engineHost = flags.get("--engine-host");
	if (flags.has("--network")) input.network = flags.get("--network");
	if (flags.has("--memory")) input.memory = flags.get("--memory");
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
		return action === "check" ? { ok: true, action, name, install: flags.includes("--install") } : { ok: true, action, name };
	}
	return { ok: false, error: `targets: unknown action ${JSON.stringify(action)} (add, check, remove)` };
}

const clock = (ms: number) => new Date(ms).toTimeString().slice(0, 8);

/** The targets as a table: name, where, running/max, queued, and whether it can be reached. */
export function formatTargets(views: readonly TargetView[]): string {
	const rows = views.map((view) => [view.name, sanitizeText(view.where), `${view.running}/${view.max}`, String(view.queued), view.unreachable ? `unreachable since ${clock(view.unreachable.since)}: ${sanitizeText(view.unreachable.reason)}` : "ok"]);
	const header = ["TARGET", "WHERE", "RUNNING", "QUEUED", "STATE"];
	const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? "").length)));
	const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ");
	return [line(header), ...rows.map(line)].join("\n");
}

/** Names are padded to this at least, so lines shown as they come line up with the report's. */
const NAME_WIDTH = 11;

/** One requirement's line, its fix under it. */
export function checkLines(item: CheckItem, width = NAME_WIDTH): string[] {
	return [`${item.ok ? "ok  " : "FAIL"}  ${item.name.padEnd(width)}  ${sanitizeText(item.detail)}`, ...(item.fix && !item.ok ? [`      ${"".padEnd(width)}  fix: ${sanitizeText(item.fix)}`] : [])];
}

/** One line per requirement, its fix under it; the verdict last. */
export function formatCheck(check: TargetCheck): string {
	const width = Math.max(NAME_WIDTH, ...check.items.map((item) => item.name.length));
	const problems = check.items.filter((item) => !item.ok).length;
	return [...check.items.flatMap((item) => checkLines(item, width)), check.ok ? `${check.target}: ready` : `${check.target}: not ready (${problems} problem${problems === 1 ? "" : "s"})`].join("\n");
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

export async function runTargetsCommand(service: BoardService, parsed: Extract<TargetsParsed, { ok: true }>, progress?: (lines: string[], checking?: string) => void): Promise<string> {
	switch (parsed.action) {
		case "list":
			return formatTargets(await service.targets.list());
		case "add": {
			const view = await service.targets.add(parsed.name, parsed.input);
			return `added target ${view.name}: ${sanitizeText(view.where)}, up to ${view.max} at a time\ncheck it: /agent-board targets check ${view.name}${view.kind === "ssh" ? " --install" : ""}`;
		}
		case "check": {
			const check = await service.targets.check(parsed.name, { install: parsed.install, ...(progress ? { progress: checkProgress(progress) } : {}) });
			const text = formatCheck(check);
			// A failed check fails the command (headless: exit 1), its report shown as one.
			if (!check.ok) throw new FailedReport(text);
			return text;
		}
		case "remove":
			await service.targets.remove(parsed.name);
			return `removed target ${parsed.name}`;
	}
}
