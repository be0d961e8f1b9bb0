/**
 * The one table of `/agent-board` subcommands. The command's description, every usage and `--help`
 * text, the completion list and the README's subcommand block are all made from it (a test holds the
 * README to it), so a new subcommand is one row here. pi's start-up reads it for the command's
 * description: it imports nothing (a subcommand's --help, with the targets' kinds, is help.ts).
 */
export interface SubcommandSpec {
	name: string;
	/** Arguments after `/agent-board` ("merge <id> [--commit] [--dry-run]"). */
	usage: string;
	/** What it does, in one line. */
	what: string;
	/** Its first argument is a row (completion offers row ids). */
	takesRow?: boolean;
}

export const SUBCOMMAND_TABLE = [
	{ name: "list", usage: "[list [--all]]", what: "the rows as a plain table (--all: archived ones too)" },
	{
		name: "dispatch",
		usage: "dispatch [--on <target>] [--count N] [--worktree] [--preset <name>] [--budget <n>] <prompt>",
		what: "start an agent; --on runs it on a target (own worktree), --count N starts an attempt set, each in its own worktree; --preset: a preset's choices; --budget: pause at that spend (50k, $2)",
	},
	{ name: "show", usage: "show <id>", what: "one row in full", takesRow: true },
	{
		name: "reply",
		usage: "reply <id> [--follow-up] <text>",
		what: "steer a working row, answer its question, or resume it",
		takesRow: true,
	},
	{ name: "stop", usage: "stop <id>", what: "stop the row's run", takesRow: true },
	{ name: "archive", usage: "archive <id>", what: "hide the row from the board", takesRow: true },
	{ name: "unarchive", usage: "unarchive <id>", what: "bring an archived row back", takesRow: true },
	{
		name: "fork",
		usage: "fork <id> [N] [prompt]",
		what: "N rows from a copy of a finished row's conversation, each in a fresh worktree",
		takesRow: true,
	},
	{
		name: "compare",
		usage: "compare <id> [<other id>]",
		what: "the row's attempt set (files, overlaps), or the diff of two attempts",
		takesRow: true,
	},
	{
		name: "merge",
		usage: "merge <id> [--commit] [--dry-run]",
		what: "merge a finished worktree row into the main checkout",
		takesRow: true,
	},
	{
		name: "keep",
		usage: "keep <id> [--commit] [--force] [--dry-run]",
		what: "keep one attempt of a set: merge it, then archive the others and remove their worktrees (--force: even with uncommitted work)",
		takesRow: true,
	},
	{
		name: "remove-worktree",
		usage: "remove-worktree <id> [--force]",
		what: "remove the row's worktree",
		takesRow: true,
	},
	{
		name: "search",
		usage: "search <words> [since:3d] [on:<target>] [s:<state>] [preset:<name>] [file:<path>]",
		what: 'find rows by anything that ran: prompts, the agent\'s text, tool calls and output, questions and answers, errors, changed files ("a phrase", archived rows too)',
	},
	{ name: "gc", usage: "gc [--dry-run]", what: "trim old runs' logs of archived rows; prints what it freed" },
	{ name: "back", usage: "back", what: "switch back to the session you attached from" },
	{
		name: "targets",
		usage: "targets [add|check|remove|set|drain|undrain <name> ...]",
		what: "where rows run: this machine and ssh hosts or containers, with their limits (targets --help)",
	},
	{
		name: "budget",
		usage: "budget <id> <amount>",
		what: "set how much a row may spend (50k tokens, $2); a row its budget paused goes on in place",
		takesRow: true,
	},
	{
		name: "supervisor",
		usage: "supervisor [replay [--since <when> | --corpus <file>]]",
		what: "who answers routine questions (model, rules files, log); replay: what the rules would do now with each recorded question, or with a labelled corpus",
	},
	{
		name: "report",
		usage: "report [--since <when>]",
		what: "the morning report: what ran, finished, failed and why; answers given for you; questions waiting; spend per target, preset and day (--since 12h by default; 2d, today, a date)",
	},
	{
		name: "serve",
		usage: "serve [--port N] [--host H] | --stop | --status | --rotate",
		what: "the board in a browser or on a phone (127.0.0.1 unless --host): a detached server over this store; prints a one-time login URL and QR code",
	},
	{
		name: "notify",
		usage: "notify [add <name> <url> [--format ntfy|slack|discord|json] [--on <events>] | list | test <name> | remove <name>]",
		what: "tell you where you are when a row needs input, fails, completes, pauses on budget or is answered (events: needs-input,failed,completed,budget,answered); delivered with no board open; URLs shown masked",
	},
] as const satisfies readonly SubcommandSpec[];

export type SubcommandName = (typeof SUBCOMMAND_TABLE)[number]["name"];

export const SUBCOMMANDS: readonly SubcommandName[] = SUBCOMMAND_TABLE.map((spec) => spec.name);

export const ID_NOTE = "<id>: a row id, a unique id prefix, or the row's exact name";

export function spec(name: string): SubcommandSpec | undefined {
	return SUBCOMMAND_TABLE.find((candidate) => candidate.name === name);
}

/** The command's description as pi lists it. */
export const COMMAND_DESCRIPTION = `Board of background agents (no argument: the dashboard). Subcommands: ${SUBCOMMANDS.join("|")}; <subcommand> --help explains one`;

/** Every usage line, as printed with a bad argument. */
export const USAGE = ["usage:", ...SUBCOMMAND_TABLE.map((s) => `  /agent-board ${s.usage}`), ID_NOTE].join("\n");

export function takesRow(name: string): boolean {
	const s = spec(name);
	return s !== undefined && "takesRow" in s && s.takesRow === true;
}

/** The README's subcommand block (between its markers), aligned. */
export function readmeBlock(): string {
	const width = Math.max(...SUBCOMMAND_TABLE.map((s) => s.usage.length)) + 15;
	const lines = SUBCOMMAND_TABLE.map((s) => `/agent-board ${s.usage}`.padEnd(width) + s.what);
	return [...lines, "", ID_NOTE].join("\n");
}
