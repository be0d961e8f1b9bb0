/**
 * Where rows run, as every text UI shows it: the `on:<target>` filter, the TARGET column of `list`
 * (only when some row runs elsewhere), `show`'s `target:` line, an unreachable row's summary (not a
 * failure) and its count in the footer, `dispatch --on` and `targets` parsed from the one table.
 */
import { describe, expect, it } from "vitest";
import { parseSubcommand } from "../src/board/subcommands/subcommands.ts";
import { formatDetail, formatTable } from "../src/board/subcommands/table.ts";
import { subcommandHelp } from "../src/board/subcommands/help.ts";
import { parseFilter, rowMatches } from "../src/board/view-model/list-model.ts";
import { countRows, summaryText, unreachableText } from "../src/board/view-model/row-text.ts";
import { makeRow } from "../test-support/fake-board-service.ts";

const since = new Date(2024, 0, 2, 14, 3, 9).getTime();
const rows = () => [
	makeRow({ id: "here1", name: "local row" }),
	makeRow({ id: "far1", name: "dev row", target: "dev", state: "working", alive: true }),
	makeRow({
		id: "box1",
		name: "box row",
		target: "dev-box",
		state: "working",
		alive: false,
		summary: "was working",
		unreachable: { since, reason: "ssh: connect to host dev-box port 22: Connection refused\x1b]0;owned\x07" },
	}),
];

describe("targets in the board's text", () => {
	it("on:<target> filters by where rows run; on:local is this machine; it combines with s: and words", () => {
		const all = rows();
		const ids = (filter: string) => all.filter((row) => rowMatches(row, parseFilter(filter))).map((row) => row.id);
		expect(parseFilter("on:dev s:work fix")).toEqual({ states: ["work"], targets: ["dev"], words: ["fix"] });
		expect(ids("on:local")).toEqual(["here1"]);
		expect(ids("on:dev-box")).toEqual(["box1"]);
		// A prefix, as s: is: the list narrows while the name is typed.
		expect(ids("on:dev")).toEqual(["far1", "box1"]);
		expect(ids("on:nowhere")).toEqual([]);
		expect(ids("on:dev s:work dev row")).toEqual(["far1"]);
	});

	it("an unreachable row keeps its state and says since when and why, sanitised; it counts as running", () => {
		const row = rows()[2]!;
		expect(row.state).toBe("working");
		expect(unreachableText(row)).toBe(
			"unreachable since 14:03: ssh: connect to host dev-box port 22: Connection refused",
		);
		expect(summaryText(row, Date.now())).toBe(unreachableText(row));
		expect(countRows(rows())).toEqual({ rows: 3, archived: 0, waiting: 0, running: 2 });
	});

	it("list prints a TARGET column only when some row runs elsewhere; show prints target:", () => {
		const now = Date.now();
		const local = formatTable([rows()[0]!], now);
		expect(local.split("\n")[0]).toMatch(/^ID\s+STATE\s+NAME\s+AGE\s+MODEL/);
		expect(local).not.toContain("TARGET");
		const table = formatTable(rows(), now).split("\n");
		expect(table[0]).toMatch(/^ID\s+STATE\s+NAME\s+AGE\s+TARGET\s+MODEL/);
		expect(table.find((line) => line.startsWith("here1"))).toMatch(/\blocal\b/);
		expect(table.find((line) => line.startsWith("box1"))).toMatch(
			/working .* dev-box .*unreachable since 14:03: ssh: connect/,
		);
		expect(table.join("\n")).not.toContain("\x1b");
		expect(formatDetail(rows()[0]!, now)).toContain("target:    local");
		expect(formatDetail(rows()[1]!, now)).toContain("target:    dev\n");
		expect(formatDetail(rows()[2]!, now)).toContain(
			"target:    dev-box (unreachable since 14:03: ssh: connect to host dev-box port 22: Connection refused)",
		);
	});

	it("dispatch --on <target> and targets ... come from the one subcommand table", () => {
		expect(parseSubcommand("dispatch --on dev --count 2 fix it")).toEqual({
			ok: true,
			kind: "attempt",
			name: "dispatch",
			text: "fix it",
			count: 2,
			worktree: false,
			target: "dev",
		});
		expect(parseSubcommand("dispatch --on=dev fix it")).toMatchObject({ ok: true, target: "dev", text: "fix it" });
		expect(parseSubcommand("dispatch --on")).toMatchObject({
			ok: false,
			error: expect.stringContaining("--on needs a target's name"),
		});
		expect(parseSubcommand("targets")).toEqual({ ok: true, name: "targets", targets: { ok: true, action: "list" } });
		expect(parseSubcommand("targets check dev --install")).toEqual({
			ok: true,
			name: "targets",
			targets: { ok: true, action: "check", name: "dev", install: true },
		});
		expect(parseSubcommand("targets frob")).toMatchObject({
			ok: false,
			error: expect.stringContaining("unknown action"),
		});
		expect(subcommandHelp("targets")).toContain("/agent-board targets add <name> --ssh <host>");
	});
});
