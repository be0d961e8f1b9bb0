/**
 * `/agent-board <subcommand>` for scripting and non-TUI modes. Parsing is pure; `runSubcommand`
 * performs it against the service and returns the text to show.
 */
import { formatGcReport, gc } from "../gc.ts";
import type { BoardRow, BoardService } from "../types.ts";
import { formatDetail, formatTable } from "./table.ts";

export const SUBCOMMANDS = ["list", "dispatch", "stop", "archive", "unarchive", "reply", "show", "gc"] as const;
export type SubcommandName = (typeof SUBCOMMANDS)[number];

export const USAGE = [
	"usage: /agent-board [list [--all]]",
	"       /agent-board dispatch <prompt>",
	"       /agent-board stop|archive|unarchive|show <id>",
	"       /agent-board reply <id> <text>",
	"       /agent-board gc [--dry-run]",
].join("\n");

export type Parsed = { ok: true; name: SubcommandName; id?: string; text?: string; all?: boolean; dryRun?: boolean } | { ok: false; error: string };

export function parseSubcommand(args: string): Parsed {
	const trimmed = args.trim();
	if (!trimmed) return { ok: true, name: "list" };
	const [head = "", ...restParts] = trimmed.split(/\s+/);
	const rest = trimmed.slice(head.length).trim();
	const name = SUBCOMMANDS.find((candidate) => candidate === head);
	if (!name) return { ok: false, error: `unknown subcommand "${head}"\n${USAGE}` };
	if (name === "list") {
		if (rest && rest !== "--all") return { ok: false, error: `list takes only --all\n${USAGE}` };
		return { ok: true, name, all: rest === "--all" };
	}
	if (name === "gc") {
		if (rest && rest !== "--dry-run") return { ok: false, error: `gc takes only --dry-run\n${USAGE}` };
		return { ok: true, name, dryRun: rest === "--dry-run" };
	}
	if (name === "dispatch") return rest ? { ok: true, name, text: rest } : { ok: false, error: `dispatch needs a prompt\n${USAGE}` };
	const id = restParts[0];
	if (!id) return { ok: false, error: `${name} needs a row id\n${USAGE}` };
	if (name === "reply") {
		const text = rest.slice(id.length).trim();
		return text ? { ok: true, name, id, text } : { ok: false, error: `reply needs text after the id\n${USAGE}` };
	}
	if (restParts.length > 1) return { ok: false, error: `${name} takes exactly one id\n${USAGE}` };
	return { ok: true, name, id };
}

/** Resolves an id or unique id prefix or exact name. */
export function resolveRow(rows: readonly BoardRow[], key: string): BoardRow | string {
	const exact = rows.find((row) => row.id === key) ?? rows.find((row) => row.name === key);
	if (exact) return exact;
	const prefixed = rows.filter((row) => row.id.startsWith(key));
	if (prefixed.length === 1 && prefixed[0]) return prefixed[0];
	if (prefixed.length > 1) return `ambiguous id "${key}": ${prefixed.map((row) => row.id).join(", ")}`;
	return `no row "${key}" (see /agent-board list --all)`;
}

export async function runSubcommand(service: BoardService, parsed: Extract<Parsed, { ok: true }>, cwd: string, now = Date.now()): Promise<string> {
	if (parsed.name === "list") return formatTable(await service.list({ includeArchived: parsed.all }), now, parsed.all);
	if (parsed.name === "gc") return formatGcReport(gc(service.storeDir, { dryRun: parsed.dryRun }));
	if (parsed.name === "dispatch") {
		const row = await service.dispatch({ prompt: parsed.text ?? "", cwd });
		return `dispatched ${row.id} (${row.name})`;
	}
	const rows = await service.list({ includeArchived: true });
	const row = resolveRow(rows, parsed.id ?? "");
	if (typeof row === "string") throw new Error(row);
	switch (parsed.name) {
		case "show":
			return formatDetail(row, now);
		case "stop":
			return `stopped ${row.id}: ${(await service.stop(row.id)).state}`;
		case "archive":
			await service.archive(row.id);
			return `archived ${row.id}`;
		case "unarchive":
			await service.unarchive(row.id);
			return `unarchived ${row.id}`;
		default:
			return `replied to ${(await service.reply(row.id, parsed.text ?? "")).row.id}`;
	}
}

/** Argument completion: subcommand names, then row ids for commands that take one. */
export function completeArgs(prefix: string, rows: readonly BoardRow[]): { value: string; label: string; description?: string }[] | null {
	const parts = prefix.split(/\s+/);
	if (parts.length <= 1) {
		const items = SUBCOMMANDS.filter((name) => name.startsWith(parts[0] ?? "")).map((name) => ({ value: name, label: name }));
		return items.length > 0 ? items : null;
	}
	const [head = "", idPrefix = ""] = parts;
	if (parts.length !== 2 || !["stop", "archive", "unarchive", "reply", "show"].includes(head)) return null;
	const items = rows
		.filter((row) => row.id.startsWith(idPrefix))
		.slice(0, 30)
		.map((row) => ({ value: `${head} ${row.id}`, label: row.id, description: `${row.state} ${row.name}` }));
	return items.length > 0 ? items : null;
}
