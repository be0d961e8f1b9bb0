/** Pure parts of attempts: subcommand parsing (bad input rejected before anything runs) and overlap detection. */
import { describe, expect, it } from "vitest";
import { checkCount } from "../src/board/engine/dispatch-checks.ts";
import { computeOverlaps, overlapCandidates } from "../src/board/engine/git/overlap.ts";
import { plain, plainLines } from "../src/board/view-model/plain.ts";
import { parseSubcommand } from "../src/board/subcommands/subcommands.ts";
import { makeRow } from "../test-support/fake-board-service.ts";

describe("attempt subcommand parsing", () => {
	it("parses dispatch flags, fork, compare, merge and remove-worktree", () => {
		expect(parseSubcommand("dispatch --count 3 --worktree fix it")).toEqual({
			ok: true,
			kind: "attempt",
			name: "dispatch",
			text: "fix it",
			count: 3,
			worktree: true,
		});
		expect(parseSubcommand("dispatch --count=2 fix it")).toMatchObject({
			name: "dispatch",
			text: "fix it",
			count: 2,
			worktree: false,
		});
		expect(parseSubcommand("dispatch --worktree fix it")).toMatchObject({
			name: "dispatch",
			text: "fix it",
			worktree: true,
		});
		// Plain dispatch keeps its shape; `--` ends the flags; unknown dashes belong to the prompt.
		expect(parseSubcommand("dispatch fix it")).toEqual({ ok: true, name: "dispatch", text: "fix it" });
		expect(parseSubcommand("dispatch --worktree -- --count 3 is my prompt")).toMatchObject({
			text: "--count 3 is my prompt",
			worktree: true,
		});
		expect(parseSubcommand("dispatch --verbose flag is broken")).toEqual({
			ok: true,
			name: "dispatch",
			text: "--verbose flag is broken",
		});
		expect(parseSubcommand("fork r1")).toEqual({
			ok: true,
			kind: "attempt",
			name: "fork",
			id: "r1",
			count: undefined,
			text: undefined,
		});
		expect(parseSubcommand("fork r1 3 try the other approach")).toMatchObject({
			id: "r1",
			count: 3,
			text: "try the other approach",
		});
		expect(parseSubcommand("fork r1 try 2 ways")).toMatchObject({ id: "r1", count: undefined, text: "try 2 ways" });
		expect(parseSubcommand("compare r1")).toMatchObject({ name: "compare", id: "r1", other: undefined });
		expect(parseSubcommand("compare r1 r2")).toMatchObject({ name: "compare", id: "r1", other: "r2" });
		expect(parseSubcommand("merge r1")).toMatchObject({ name: "merge", id: "r1", commit: false, dryRun: false });
		expect(parseSubcommand("merge r1 --commit --dry-run")).toMatchObject({
			name: "merge",
			id: "r1",
			commit: true,
			dryRun: true,
		});
		expect(parseSubcommand("remove-worktree r1 --force")).toMatchObject({
			name: "remove-worktree",
			id: "r1",
			force: true,
		});
	});

	it("rejects bad counts and options with a clear message and the usage", () => {
		const cases: Array<[string, RegExp]> = [
			["dispatch --count 0 hi", /count must be a whole number from 1 to 64 \(got 0\)/],
			["dispatch --count 999 hi", /from 1 to 64 \(got 999\)/],
			["dispatch --count -2 hi", /from 1 to 64 \(got -2\)/],
			["dispatch --count abc hi", /--count needs a whole number, got "abc"/],
			["dispatch --count", /--count needs a whole number/],
			["dispatch --count 3", /dispatch needs a prompt/],
			["fork", /fork needs a row id/],
			["fork r1 0", /from 1 to 8 \(got 0\)/],
			["fork r1 50", /from 1 to 8 \(got 50\)/],
			["compare", /compare takes one row id/],
			["compare a b c", /compare takes one row id/],
			["merge", /merge needs a row id/],
			["merge --commit", /merge needs a row id/],
			["merge r1 --force", /merge: unknown option --force/],
			["remove-worktree r1 --now", /remove-worktree takes only --force/],
		];
		for (const [input, message] of cases) {
			const parsed = parseSubcommand(input);
			expect(parsed.ok, input).toBe(false);
			if (!parsed.ok) {
				expect(parsed.error, input).toMatch(message);
				expect(parsed.error, input).toContain("usage: /agent-board");
			}
		}
		for (const bad of [0, -1, 1.5, 9, Number.NaN, "3"])
			expect(() => checkCount(bad)).toThrow(/count must be a whole number from 1 to 8/);
		expect(checkCount(undefined)).toBe(1);
		expect(checkCount(8)).toBe(8);
	});
});

describe("overlaps", () => {
	it("names each shared file and the other rows, per repository", () => {
		const overlaps = computeOverlaps([
			{ id: "a", repo: "/r", files: ["x.ts", "y.ts", "x.ts"] },
			{ id: "b", repo: "/r", files: ["x.ts"] },
			{ id: "c", repo: "/r", files: ["x.ts", "z.ts"] },
			{ id: "d", repo: "/other", files: ["y.ts"] },
		]);
		expect(overlaps.get("a")).toEqual([{ file: "x.ts", rows: ["b", "c"] }]);
		expect(overlaps.get("c")).toEqual([{ file: "x.ts", rows: ["a", "b"] }]);
		expect(overlaps.has("d")).toBe(false);
	});

	it("pairs rows of different attempt sets only: attempts of one set are alternatives, not rivals", () => {
		const overlaps = computeOverlaps([
			{ id: "a1", repo: "/r", files: ["x.ts"], set: "set-a" },
			{ id: "a2", repo: "/r", files: ["x.ts"], set: "set-a" },
			{ id: "b1", repo: "/r", files: ["x.ts", "y.ts"], set: "set-b" },
			{ id: "solo", repo: "/r", files: ["y.ts"] },
		]);
		expect(overlaps.get("a1")).toEqual([{ file: "x.ts", rows: ["b1"] }]);
		expect(overlaps.get("a2")).toEqual([{ file: "x.ts", rows: ["b1"] }]);
		expect(overlaps.get("b1")).toEqual([
			{ file: "x.ts", rows: ["a1", "a2"] },
			{ file: "y.ts", rows: ["solo"] },
		]);
		const alone = computeOverlaps([
			{ id: "a1", repo: "/r", files: ["x.ts"], set: "set-a" },
			{ id: "a2", repo: "/r", files: ["x.ts"], set: "set-a" },
		]);
		expect(alone.size).toBe(0);
	});

	it("leaves out merged, archived and non-worktree rows", () => {
		const rows = [
			makeRow({ id: "w1", worktreePath: "/wt/1", repo: "/r" }),
			makeRow({ id: "m1", worktreePath: "/wt/2", repo: "/r", merged: { at: 1, commit: "c", into: "main" } }),
			makeRow({ id: "a1", worktreePath: "/wt/3", repo: "/r", archived: true }),
			makeRow({ id: "p1", repo: "/r" }),
		];
		expect(overlapCandidates(rows).map((row) => row.id)).toEqual(["w1"]);
	});

	it("strips escape and control sequences from untrusted text", () => {
		expect(plain("a\x1b[2Jb\x1b]0;t\x07c\x9b1md\ne\x00")).toBe("abcd e\u2400");
		expect(plainLines("+x\x1b[31m\r\n-y")).toBe("+x\n-y");
		// Bidi controls too: the same rules as every other text the board prints.
		expect(plain("abc \u202eevil\u202c")).toBe("abc \ufffdevil\ufffd");
	});
});
