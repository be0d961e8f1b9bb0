import { visibleWidth } from "@earendil-works/pi-tui";
import { describe, expect, it } from "vitest";
import { completeArgs, parseSubcommand, resolveRow } from "../src/board/subcommands/subcommands.ts";
import { formatTable } from "../src/board/subcommands/table.ts";
import { parseTranscript } from "../src/board/view-model/transcript.ts";
import { formatRowLine, rowLineParts } from "../src/board/dashboard/row-line.ts";
import { buildListItems, parseFilter, rowItems } from "../src/board/view-model/list-model.ts";
import { statusText, transitions } from "../src/board/presence/presence.ts";
import { makeRow } from "../test-support/fake-board-service.ts";

describe("dashboard view-model", () => {
	it("groups by state with needs_input first and pinned rows above all groups", () => {
		const done = makeRow({ name: "done", state: "completed" });
		const asking = makeRow({ name: "asking", state: "needs_input", question: "Which db?" });
		const working = makeRow({ name: "busy", state: "working", alive: true });
		const pinned = makeRow({ name: "pinned one", state: "completed", pinned: true });
		const items = buildListItems([done, working, asking, pinned]);
		const labels = items.map((item) => (item.kind === "header" ? `#${item.label}` : item.row.name));
		expect(labels).toEqual([
			"#Pinned",
			"pinned one",
			"#Needs input",
			"asking",
			"#Working",
			"busy",
			"#Completed",
			"done",
		]);
	});

	it("filters by text words and by s:<state> prefixes, hides archived unless asked", () => {
		const rows = [
			makeRow({ name: "fix login bug", state: "failed" }),
			makeRow({ name: "write docs", state: "needs_input" }),
			makeRow({ name: "old login", state: "completed", archived: true }),
		];
		const names = (filter: string, showArchived = false) =>
			rowItems(buildListItems(rows, { filter, showArchived })).map((row) => row.name);
		expect(names("login")).toEqual(["fix login bug"]);
		expect(names("login", true).sort()).toEqual(["fix login bug", "old login"]);
		expect(names("s:need")).toEqual(["write docs"]);
		expect(names("s:fail login")).toEqual(["fix login bug"]);
		expect(names("s:nosuchstate")).toEqual([]);
		expect(parseFilter("s:needs-input").states).toEqual(["needs_input"]);
	});

	it("fits every row line into the width, with wide characters and emoji in names", () => {
		const now = Date.now();
		const rows = [
			makeRow({
				name: "\u{1F680}\u{1F680} rocket \u6F22\u5B57\u6F22\u5B57\u6F22\u5B57 deploy",
				summary: "\u4E2D\u6587\u6458\u8981 ".repeat(20),
				model: "faux/faux-1",
				usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 12345, cost: 0.0123 },
			}),
			makeRow({
				name: "x".repeat(400),
				summary: "",
				worktreePath: "/tmp/wt",
				branch: "board/x",
				diff: { added: 10, removed: 2, files: 3 },
			}),
		];
		for (const width of [1, 10, 40, 80, 120, 300]) {
			for (const row of rows) {
				const parts = formatRowLine(rowLineParts(row, now), width);
				expect(visibleWidth(parts.head + parts.name + parts.summary + parts.right)).toBeLessThanOrEqual(width);
			}
		}
		const wide = formatRowLine(rowLineParts(rows[0]!, now), 300);
		expect(wide.right).toContain("12k tok $0.01");
		expect(formatRowLine(rowLineParts(rows[1]!, now), 300).right).toContain("+10 -2 3f");
	});

	it("marks unread rows and shows the question as the summary of a needs_input row", () => {
		const row = makeRow({
			state: "needs_input",
			question: "Deploy to prod?",
			lastActivityAt: 2000,
			lastViewedAt: 1000,
		});
		const parts = rowLineParts(row, 3000);
		expect(parts.marker).toBe("*");
		expect(parts.summary).toEqual({ head: "Deploy to prod?", tail: "" });
		expect(rowLineParts({ ...row, lastViewedAt: 5000 }, 6000).marker).toBe(" ");
	});
});

describe("subcommands", () => {
	it("parses each subcommand and rejects bad arguments with usage", () => {
		expect(parseSubcommand("")).toEqual({ ok: true, name: "list" });
		expect(parseSubcommand("list --all")).toEqual({ ok: true, name: "list", all: true });
		expect(parseSubcommand("dispatch fix the tests")).toEqual({ ok: true, name: "dispatch", text: "fix the tests" });
		expect(parseSubcommand("reply r1 use postgres please")).toEqual({
			ok: true,
			name: "reply",
			id: "r1",
			text: "use postgres please",
		});
		const usage: Record<string, string> = {
			frobnicate: "/agent-board merge <id> [--commit] [--dry-run]",
			stop: "usage: /agent-board stop <id>",
			"reply r1": "usage: /agent-board reply <id> [--follow-up] <text>",
			dispatch:
				"usage: /agent-board dispatch [--on <target>] [--count N] [--worktree] [--preset <name>] [--budget <n>] <prompt>",
			"show a b": "usage: /agent-board show <id>",
			"list extra": "usage: /agent-board [list [--all]]",
		};
		for (const [bad, expected] of Object.entries(usage)) {
			const parsed = parseSubcommand(bad);
			expect(parsed.ok).toBe(false);
			if (!parsed.ok) expect(parsed.error).toContain(expected);
		}
		expect(parseSubcommand("merge --help")).toEqual({ ok: true, name: "merge", help: "one" });
	});

	it("resolves ids by prefix and completes subcommands and ids", () => {
		const a = makeRow({ id: "abc123", name: "alpha" });
		const b = makeRow({ id: "abd456", name: "beta" });
		expect(resolveRow([a, b], "abc")).toBe(a);
		expect(resolveRow([a, b], "beta")).toBe(b);
		expect(resolveRow([a, b], "ab")).toMatch(/ambiguous/);
		expect(resolveRow([a, b], "zz")).toMatch(/no row/);
		expect(completeArgs("st", [a])?.map((i) => i.value)).toEqual(["stop"]);
		expect(completeArgs("show abd", [a, b])?.map((i) => i.value)).toEqual(["show abd456"]);
		// A word that is already whole completes nothing, so enter runs the command.
		expect(completeArgs("stop", [a])).toBeNull();
		expect(completeArgs("show abd456", [a, b])).toBeNull();
	});

	it("prints a plain table with needs-input rows first", () => {
		const rows = [
			makeRow({ id: "c1", name: "done", state: "completed" }),
			makeRow({ id: "q1", name: "asks", state: "needs_input", question: "Which?" }),
		];
		const lines = formatTable(rows, Date.now()).split("\n");
		expect(lines[0]).toMatch(/^ID\s+STATE\s+NAME/);
		expect(lines[1]).toMatch(/^q1\s+needs_input\s+asks.*asks: Which\?/);
		expect(lines[2]).toMatch(/^c1\s+completed/);
	});
});

describe("watcher logic and transcript", () => {
	it("reports transitions into notify states only for rows seen before", () => {
		const row = makeRow({ id: "w1", state: "completed" });
		const fresh = makeRow({ id: "w2", state: "failed" });
		const previous = new Map([["w1", "working" as const]]);
		expect(transitions(previous, [row, fresh]).map((t) => t.row.id)).toEqual(["w1"]);
		expect(transitions(new Map([["w1", "completed" as const]]), [row])).toEqual([]);
		expect(
			statusText([
				makeRow({ state: "needs_input" }),
				makeRow({ state: "needs_input" }),
				makeRow({ state: "working", alive: true }),
			]),
		).toBe("board: 2 need input, 1 running");
		expect(statusText([makeRow({ state: "completed" })])).toBeUndefined();
	});

	it("parses session JSONL on newlines only and tolerates a half-written last line", () => {
		const lines = [
			JSON.stringify({ type: "session", id: "s" }),
			JSON.stringify({ type: "message", message: { role: "user", content: "hi\u2028there" } }),
			JSON.stringify({
				type: "message",
				message: {
					role: "assistant",
					content: [
						{ type: "text", text: "Hello" },
						{ type: "toolCall", name: "bash", arguments: { command: "ls" } },
					],
				},
			}),
			JSON.stringify({
				type: "message",
				message: { role: "toolResult", toolName: "bash", content: [{ type: "text", text: "a.txt" }] },
			}),
			'{"type":"message","mess',
		];
		expect(parseTranscript(lines.join("\n"))).toEqual([
			// One JSONL record despite the U+2028 inside; shown as the line break it is.
			{ role: "user", text: "hi\nthere" },
			{ role: "assistant", text: "Hello" },
			{ role: "tool", text: 'bash {"command":"ls"}' },
			{ role: "tool", text: "bash -> a.txt" },
		]);
	});
});
