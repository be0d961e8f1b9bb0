/**
 * The attempt subcommands: dispatch [--on <target>] [--count N] [--worktree], fork, compare, merge, keep
 * and remove-worktree. Parsing is pure and rejects bad input before anything runs.
 */
import { checkCount } from "../engine/attempts.ts";
import { MAX_BURST } from "../../../runner/life/vocabulary.mjs";
import { clearOthers, keepAttempt, planKeep } from "../engine/keep-attempt.ts";
import type { BoardRow, BoardService, BudgetLimit } from "../engine/types.ts";
import { parseAmount } from "../../../runner/life/budget.mjs";
import { formatAttemptSet, formatKeepPlan, formatKeepResult, formatMergeResult, formatPlan } from "./attempt-text.ts";
import { plain, plainLines } from "../view-model/plain.ts";

export type AttemptParsed =
	| {
			ok: true;
			kind: "attempt";
			name: "dispatch";
			text: string;
			count?: number;
			worktree: boolean;
			target?: string;
			preset?: string;
			budget?: BudgetLimit;
	  }
	| { ok: true; kind: "attempt"; name: "fork"; id: string; count?: number; text?: string }
	| { ok: true; kind: "attempt"; name: "compare"; id: string; other?: string }
	| { ok: true; kind: "attempt"; name: "merge"; id: string; commit: boolean; dryRun: boolean }
	| { ok: true; kind: "attempt"; name: "keep"; id: string; commit: boolean; force: boolean; dryRun: boolean }
	| { ok: true; kind: "attempt"; name: "remove-worktree"; id: string; force: boolean };

export interface AttemptIo {
	/** Ask the user a yes/no question (interactive modes only). */
	confirm?: (title: string, message: string) => Promise<boolean>;
	/** A long command's progress (targets check): its lines so far and what it is checking now. */
	progress?: (lines: string[], checking?: string) => void;
}

type ParseResult = AttemptParsed | { ok: false; error: string } | undefined;

function count(text: string | undefined, what: string): number | string {
	if (text === undefined || !/^-?\d+$/.test(text))
		return `${what} needs a whole number, got ${JSON.stringify(text ?? "")}`;
	try {
		// The bound of the target it goes to is the dispatch's to check (a pool's burst may be larger).
		return checkCount(Number(text), what === "--count" ? MAX_BURST : undefined);
	} catch (error) {
		return error instanceof Error ? error.message : String(error);
	}
}

/** Parses the attempt subcommands; undefined for names it does not own. */
/** A row id, then only the flags `allowed`: the flags it has, or the error in words. */
function idAndFlags(
	name: string,
	words: readonly string[],
	allowed: readonly string[],
	needsId: string,
): { id: string; has(flag: string): boolean } | string {
	const [id, ...flags] = words;
	if (!id || id.startsWith("--")) return needsId;
	const unknown = flags.find((flag) => !allowed.includes(flag));
	if (unknown !== undefined) return `${name}: unknown option ${unknown} (use ${allowed.join(", ")})`;
	return { id, has: (flag) => flags.includes(flag) };
}

export function parseAttemptSubcommand(name: string, rest: string): ParseResult {
	const words = rest.split(/\s+/).filter(Boolean);
	switch (name) {
		case "dispatch": {
			let text = rest;
			let n: number | undefined;
			let worktree = false;
			let target: string | undefined;
			let preset: string | undefined;
			let budget: BudgetLimit | undefined;
			for (;;) {
				const match =
					/^(--count(?:(?:=|\s+)(\S*))?|--on(?:(?:=|\s+)(\S*))?|--preset(?:(?:=|\s+)(\S*))?|--budget(?:(?:=|\s+)(\S*))?|--worktree|--)(?:\s+|$)/.exec(
						text,
					);
				if (!match) break;
				text = text.slice(match[0].length);
				if (match[1] === "--") break;
				if (match[1] === "--worktree") worktree = true;
				else if (match[1]?.startsWith("--preset")) {
					if (!match[4])
						return { ok: false, error: "--preset needs a preset's name (~/.pi/agent/agents/<name>.md)" };
					preset = match[4];
				} else if (match[1]?.startsWith("--budget")) {
					budget = parseAmount(match[5] ?? "");
					if (!budget)
						return {
							ok: false,
							error: `--budget needs an amount: 50k (tokens) or $2 (cost), got ${JSON.stringify(match[5] ?? "")}`,
						};
				} else if (match[1]?.startsWith("--on")) {
					if (!match[3])
						return { ok: false, error: "--on needs a target's name (/agent-board targets lists them)" };
					target = match[3];
				} else {
					const parsed = count(match[2] || undefined, "--count");
					if (typeof parsed === "string") return { ok: false, error: parsed };
					n = parsed;
				}
			}
			text = text.trim();
			if (!text) return { ok: false, error: "dispatch needs a prompt" };
			return {
				ok: true,
				kind: "attempt",
				name,
				text,
				count: n,
				worktree,
				...(target ? { target } : {}),
				...(preset ? { preset } : {}),
				...(budget ? { budget } : {}),
			};
		}
		case "fork": {
			const [id, second] = words;
			if (!id) return { ok: false, error: "fork needs a row id" };
			let after = rest.slice(rest.indexOf(id) + id.length).trim();
			let n: number | undefined;
			if (second !== undefined && /^-?\d+$/.test(second)) {
				const parsed = count(second, "fork");
				if (typeof parsed === "string") return { ok: false, error: parsed };
				n = parsed;
				after = after.slice(second.length).trim();
			}
			return { ok: true, kind: "attempt", name, id, count: n, text: after || undefined };
		}
		case "compare":
			if (words.length < 1 || words.length > 2)
				return { ok: false, error: "compare takes one row id (its attempt set) or two (their diff)" };
			return { ok: true, kind: "attempt", name, id: words[0] ?? "", other: words[1] };
		case "merge":
		case "keep": {
			const keep = name === "keep";
			const parsed = keep
				? idAndFlags(
						name,
						words,
						["--commit", "--force", "--dry-run"],
						"keep needs a row id (one attempt of a set)",
					)
				: idAndFlags(name, words, ["--commit", "--dry-run"], "merge needs a row id");
			if (typeof parsed === "string") return { ok: false, error: parsed };
			const common = { ok: true, kind: "attempt", id: parsed.id, commit: parsed.has("--commit") } as const;
			const dryRun = parsed.has("--dry-run");
			return keep
				? { ...common, name: "keep", force: parsed.has("--force"), dryRun }
				: { ...common, name: "merge", dryRun };
		}
		case "remove-worktree": {
			const [id, ...flags] = words;
			if (!id || id.startsWith("--")) return { ok: false, error: "remove-worktree needs a row id" };
			if (flags.some((flag) => flag !== "--force"))
				return { ok: false, error: "remove-worktree takes only --force" };
			return { ok: true, kind: "attempt", name, id, force: flags.includes("--force") };
		}
		default:
			return undefined;
	}
}

function started(rows: readonly BoardRow[]): string {
	const first = rows[0];
	if (rows.length === 1 && first && !first.attempt)
		return `dispatched ${first.id} (${plain(first.name)})${first.worktreePath ? ` in ${plain(first.worktreePath)}` : ""}`;
	const head = first?.attempt ? `started attempt set ${first.attempt.setId} (${rows.length} rows)` : "started";
	return [
		head,
		...rows.map((row) => `  ${row.id} (${plain(row.name)}) in ${plain(row.worktreePath ?? row.cwd)}`),
	].join("\n");
}

export async function runAttemptSubcommand(
	service: BoardService,
	parsed: AttemptParsed,
	cwd: string,
	io: AttemptIo,
	resolve: (key: string) => Promise<BoardRow>,
): Promise<string> {
	if (parsed.name === "dispatch") {
		const { preset, budget, target } = parsed;
		const rows = await service.dispatchAttempts({
			prompt: parsed.text,
			cwd,
			count: parsed.count,
			worktreeMode: parsed.worktree ? "worktree" : undefined,
			...(target ? { target } : {}),
			...(preset ? { preset } : {}),
			...(budget ? { budget } : {}),
		});
		return started(rows);
	}
	const row = await resolve(parsed.id);
	switch (parsed.name) {
		case "fork":
			return started(await service.fork(row.id, { count: parsed.count, prompt: parsed.text }));
		case "compare": {
			if (!parsed.other) return formatAttemptSet(await service.compare(row.id));
			const other = await resolve(parsed.other);
			return plainLines((await service.compareDiff(row.id, other.id)).join("\n"));
		}
		case "remove-worktree": {
			const { far } = await service.removeWorktree(row.id, { force: parsed.force });
			return `removed the worktree of ${row.id}${far ? `; ${plain(far)}` : ""}`;
		}
		case "merge":
			return merge(service, row, parsed, io);
		case "keep":
			return keep(service, row, parsed, io);
	}
}

async function keep(
	service: BoardService,
	row: BoardRow,
	parsed: Extract<AttemptParsed, { name: "keep" }>,
	io: AttemptIo,
): Promise<string> {
	const plan = await planKeep(service, row.id);
	if (parsed.dryRun) return `${formatKeepPlan(plan)}\n(dry run: nothing was changed)`;
	let commit = parsed.commit;
	if (io.confirm) {
		if (!(await io.confirm(`Keep ${row.id}?`, formatKeepPlan(plan))))
			return `keep of ${row.id} cancelled; nothing was changed`;
		commit = true;
	}
	const result = await keepAttempt(service, row.id, { commit, force: parsed.force });
	const done = formatKeepResult(result, row.id);
	if (done.error) throw new Error(done.text);
	if (result.status !== "kept" || result.refused.length === 0 || !io.confirm) return done.text;
	// Interactive: the uncommitted work of the others goes only on a second, explicit yes.
	const refused = plan.others
		.filter((other) => result.refused.some((r) => r.id === other.row.id))
		.map((other) => other.row);
	if (
		!(await io.confirm(
			"Remove them anyway?",
			`the worktrees of ${refused.map((r) => r.id).join(", ")} have uncommitted changes; they are lost if removed`,
		))
	)
		return done.text;
	const forced = await clearOthers(service, refused, true);
	return `${done.text}\nremoved anyway: ${forced.removed.join(", ") || "none"}${forced.refused.map((r) => `\nstill kept: ${r.id}: ${r.reason}`).join("")}`;
}

async function merge(
	service: BoardService,
	row: BoardRow,
	parsed: Extract<AttemptParsed, { name: "merge" }>,
	io: AttemptIo,
): Promise<string> {
	const planned = await service.merge(row.id, { dryRun: true });
	if (parsed.dryRun) return formatMergeResult(planned, row.id).text;
	let commit = parsed.commit;
	if (io.confirm) {
		// Interactive: the user sees the plan and decides, including committing the worktree's changes.
		const ok = await io.confirm(`Merge ${row.id}?`, formatPlan(planned.plan));
		if (!ok) return `merge of ${row.id} cancelled; nothing was changed`;
		commit = true;
	}
	const result = formatMergeResult(await service.merge(row.id, { commit }), row.id);
	if (result.error) throw new Error(result.text);
	return result.text;
}
