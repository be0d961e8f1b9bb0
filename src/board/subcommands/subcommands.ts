/**
 * `/agent-board <subcommand>` for scripting and non-TUI modes. Parsing is pure; `runSubcommand`
 * performs it against the service and returns the text to show. Names and usage come from the one
 * table in usage.ts.
 */
import { formatGcReport, gc } from "../engine/gc.ts";
import { parseTargetsCommand, runTargetsCommand, type TargetsParsed } from "./targets-command.ts";
import {
	parseBudgetCommand,
	parseSupervisorCommand,
	runSupervisorCommand,
	type SupervisorParsed,
} from "./supervisor-command.ts";
import { agentDirOf } from "../engine/policy/rules-paths.ts";
import type { BoardRow, BoardService } from "../engine/types.ts";
import { DELIVERY_TEXT } from "../view-model/delivery-text.ts";
import {
	parseAttemptSubcommand,
	runAttemptSubcommand,
	type AttemptIo,
	type AttemptParsed,
} from "./attempt-subcommands.ts";
import { attemptDetail } from "./attempt-text.ts";
import { parseReportArgs } from "./report-args.ts";
import { formatDetail, formatTable } from "./table.ts";
import { subcommandHelp } from "./help.ts";
import { SUBCOMMANDS, type SubcommandName, takesRow, USAGE } from "./usage.ts";
import { parseServeArgs, type ServeAction } from "../../web/serve-args.ts";
import { inert } from "../engine/sanitize.ts";
import { stopText } from "../view-model/stop-text.ts";
import { type NotifyAction, parseNotifyArgs, runNotify } from "./notify-command.ts";

export { SUBCOMMANDS, type SubcommandName, USAGE } from "./usage.ts";

type Simple = {
	ok: true;
	name: SubcommandName;
	id?: string;
	text?: string;
	all?: boolean;
	followUp?: boolean;
	dryRun?: boolean;
	help?: "all" | "one";
};
type Targets = { ok: true; name: "targets"; targets: Extract<TargetsParsed, { ok: true }> };
type Serve = { ok: true; name: "serve"; serve: ServeAction };
type Report = { ok: true; name: "report"; since: string };
type Notify = { ok: true; name: "notify"; notify: NotifyAction };
export type Parsed =
	| Simple
	| AttemptParsed
	| Targets
	| SupervisorParsed
	| Serve
	| Report
	| Notify
	| { ok: false; error: string };

export function parseSubcommand(args: string): Parsed {
	const trimmed = args.trim();
	if (!trimmed) return { ok: true, name: "list" };
	const [head = "", ...restParts] = trimmed.split(/\s+/);
	const rest = trimmed.slice(head.length).trim();
	if (head === "--help" || head === "-h" || head === "help") return { ok: true, name: "list", help: "all" };
	const name = SUBCOMMANDS.find((candidate) => candidate === head);
	if (!name) return { ok: false, error: `unknown subcommand "${head}"\n${USAGE}` };
	if (rest === "--help" || rest === "-h") return { ok: true, name, help: "one" };
	if (name === "back")
		return rest ? { ok: false, error: `back takes no arguments\n${subcommandHelp("back")}` } : { ok: true, name };
	if (name === "list") {
		if (rest && rest !== "--all") return { ok: false, error: `list takes only --all\n${subcommandHelp(name)}` };
		return { ok: true, name, all: rest === "--all" };
	}
	if (name === "targets") {
		const targets = parseTargetsCommand(rest);
		return targets.ok
			? { ok: true, name, targets }
			: { ok: false, error: `${targets.error}\n${subcommandHelp(name)}` };
	}
	if (name === "notify") {
		const notify = parseNotifyArgs(rest);
		return notify.ok
			? { ok: true, name, notify: notify.notify }
			: { ok: false, error: `${notify.error}\n${subcommandHelp(name)}` };
	}
	if (name === "serve") {
		const serve = parseServeArgs(rest);
		return serve.ok
			? { ok: true, name, serve: serve.serve }
			: { ok: false, error: `${serve.error}\n${subcommandHelp(name)}` };
	}
	if (name === "supervisor" || name === "budget") {
		const parsed = name === "supervisor" ? parseSupervisorCommand(rest) : parseBudgetCommand(rest);
		return parsed.ok ? parsed : { ok: false, error: `${parsed.error}\n${subcommandHelp(name)}` };
	}
	if (name === "report") {
		const report = parseReportArgs(rest);
		return report.ok
			? { ok: true, name, since: report.since }
			: { ok: false, error: `${report.error}\n${subcommandHelp(name)}` };
	}
	if (name === "search")
		return rest
			? { ok: true, name, text: rest }
			: { ok: false, error: `search needs words\n${subcommandHelp(name)}` };
	if (name === "gc") {
		if (rest && rest !== "--dry-run") return { ok: false, error: `gc takes only --dry-run\n${subcommandHelp(name)}` };
		return { ok: true, name, dryRun: rest === "--dry-run" };
	}
	const attempt = parseAttemptSubcommand(name, rest);
	if (attempt && !attempt.ok) return { ok: false, error: `${attempt.error}\n${subcommandHelp(name)}` };
	// A plain dispatch keeps its original shape; flags make it an attempt dispatch.
	if (
		attempt?.name === "dispatch" &&
		attempt.count === undefined &&
		!attempt.worktree &&
		!attempt.target &&
		!attempt.preset &&
		!attempt.budget
	)
		return { ok: true, name, text: attempt.text };
	if (attempt) return attempt;
	const id = restParts[0];
	if (!id) return { ok: false, error: `${name} needs a row id\n${subcommandHelp(name)}` };
	if (name === "reply") {
		let text = rest.slice(id.length).trim();
		const followUp = /^--follow-up(\s|$)/.test(text);
		if (followUp) text = text.slice("--follow-up".length).trim();
		if (!text) return { ok: false, error: `reply needs text after the id\n${subcommandHelp(name)}` };
		return followUp ? { ok: true, name, id, text, followUp } : { ok: true, name, id, text };
	}
	if (restParts.length > 1) return { ok: false, error: `${name} takes exactly one id\n${subcommandHelp(name)}` };
	return { ok: true, name, id };
}

/**
 * list's own pump: the settle step over every row first (on a store this process may write: one it
 * can only read is listed as read, unchanged), then the rows.
 */
export async function listSupervised(
	service: BoardService,
	options: { includeArchived?: boolean; slim?: boolean },
): Promise<BoardRow[]> {
	await service.supervise?.({ all: true });
	return service.list(options);
}

/** Resolves an id or unique id prefix or exact name. */
export function resolveRow(rows: readonly BoardRow[], key: string): BoardRow | string {
	const exact = rows.find((row) => row.id === key) ?? rows.find((row) => row.name === key);
	if (exact) return exact;
	const prefixed = rows.filter((row) => row.id.startsWith(key));
	if (prefixed.length === 1 && prefixed[0]) return prefixed[0];
	if (prefixed.length > 1) return `ambiguous id "${inert(key)}": ${prefixed.map((row) => row.id).join(", ")}`;
	return `no row "${inert(key)}" (see /agent-board list --all)`;
}

/**
 * `io.confirm` asks the user (TUI); without it a merge that needs a decision fails with the flag
 * to pass instead. A conflicting merge throws, so headless runs exit 1.
 */
export async function runSubcommand(
	service: BoardService,
	parsed: Extract<Parsed, { ok: true }>,
	cwd: string,
	now = Date.now(),
	io: AttemptIo = {},
): Promise<string> {
	if ("help" in parsed && parsed.help) return parsed.help === "one" ? subcommandHelp(parsed.name) : USAGE;
	// The table shows one line a row: the slim rows (no events or whole answers parsed again) do.
	if (parsed.name === "list")
		return formatTable(
			await listSupervised(service, { includeArchived: "all" in parsed ? parsed.all : false, slim: true }),
			now,
			"all" in parsed ? parsed.all : false,
		);
	if (parsed.name === "back") throw new Error("back switches pi's session: it works in interactive pi only");
	if ("targets" in parsed) return runTargetsCommand(service, parsed.targets, io.progress);
	if ("notify" in parsed) return runNotify(parsed.notify, service.storeDir);
	if ("serve" in parsed) {
		// The server's code loads only when it is used.
		const output = await (await import("../../web/serve-command.ts")).runServe(parsed.serve, service.storeDir, cwd);
		return [output.text, ...(output.qr ?? []), ...(output.after ? ["", output.after] : [])].join("\n");
	}
	if ("since" in parsed && parsed.name === "report")
		// Loaded when used: it reads the web server's record for the rows' links.
		return (await import("./report-command.ts")).runReport(service, parsed.since, now);
	if ("replay" in parsed || "amount" in parsed) {
		return runSupervisorCommand(service, parsed, cwd, agentDirOf(process.env), async (key) => {
			const found = resolveRow(await service.list({ includeArchived: true, slim: true }), key);
			if (typeof found === "string") throw new Error(found);
			return found;
		});
	}
	// The index's code loads only when a search is made.
	if (parsed.name === "search")
		return (await import("./search-text.ts")).runSearch(service.storeDir, parsed.text ?? "");
	if (parsed.name === "gc")
		return formatGcReport(gc(service.storeDir, { dryRun: "dryRun" in parsed ? parsed.dryRun : false }));
	if ("kind" in parsed || parsed.name === "dispatch") {
		const attempt: AttemptParsed =
			"kind" in parsed
				? parsed
				: { ok: true, kind: "attempt", name: "dispatch", text: parsed.text ?? "", worktree: false };
		return runAttemptSubcommand(service, attempt, cwd, io, async (key) => {
			const found = resolveRow(await service.list({ includeArchived: true }), key);
			if (typeof found === "string") throw new Error(found);
			return found;
		});
	}
	const rows = await service.list({ includeArchived: true });
	const row = resolveRow(rows, parsed.id ?? "");
	if (typeof row === "string") throw new Error(row);
	switch (parsed.name) {
		case "show":
			return [formatDetail(row, now), ...attemptDetail(row)].join("\n");
		case "stop":
			return `${row.id}: ${stopText(await service.stopOutcome(row.id))}`;
		case "archive":
			await service.archive(row.id);
			return `archived ${row.id}`;
		case "unarchive":
			await service.unarchive(row.id);
			return `unarchived ${row.id}`;
		default: {
			const result = await service.reply(row.id, parsed.text ?? "", {
				followUp: "followUp" in parsed ? parsed.followUp : false,
			});
			return `${row.id}: ${DELIVERY_TEXT[result.delivery]}`;
		}
	}
}

/**
 * Argument completion: subcommand names, then row ids for commands that take one. A word that
 * already is a whole name or id completes nothing, so enter runs the command.
 */
export function completeArgs(
	prefix: string,
	rows: readonly BoardRow[],
): { value: string; label: string; description?: string }[] | null {
	const parts = prefix.split(/\s+/);
	if (parts.length <= 1) {
		const word = parts[0] ?? "";
		if (SUBCOMMANDS.some((name) => name === word)) return null;
		const items = SUBCOMMANDS.filter((name) => name.startsWith(word)).map((name) => ({ value: name, label: name }));
		return items.length > 0 ? items : null;
	}
	const [head = "", idPrefix = ""] = parts;
	if (parts.length !== 2 || !takesRow(head)) return null;
	if (rows.some((row) => row.id === idPrefix)) return null;
	const items = rows
		.filter((row) => row.id.startsWith(idPrefix))
		.slice(0, 30)
		.map((row) => ({ value: `${head} ${row.id}`, label: row.id, description: `${row.state} ${row.name}` }));
	return items.length > 0 ? items : null;
}
