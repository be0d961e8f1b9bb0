/**
 * A pool's row is found and named by where it runs: `on:<member>` finds the rows any pool placed on that
 * member (as `on:<pool>` does), and its place reads `pool/member` in the list, `show` and the page.
 */
import { describe, expect, it } from "vitest";
import { formatDetail, formatTable } from "../src/board/subcommands/table.ts";
import { parseFilter, rowMatches } from "../src/board/view-model/list-model.ts";
import { pageRow } from "../src/web/server/row-json.ts";
import { makeRow } from "../test-support/fake-board-service.ts";

const rows = () => [
	makeRow({ id: "here1", name: "local row" }),
	makeRow({ id: "direct1", name: "on box1 itself", target: "box1", host: "box1", state: "working", alive: true }),
	makeRow({ id: "pooled1", name: "build placed it", target: "build", host: "box1", state: "working", alive: true }),
	makeRow({ id: "pooled2", name: "build placed it", target: "build", host: "box2", state: "working", alive: true }),
	makeRow({ id: "waiting1", name: "not placed yet", target: "build", state: "queued" }),
];
const ids = (filter: string) =>
	rows()
		.filter((row) => rowMatches(row, parseFilter(filter)))
		.map((row) => row.id);

describe("a pool's row by its member", () => {
	it("on:<member> finds the rows any pool placed there; on:<pool> every row of the pool", () => {
		expect(ids("on:box1")).toEqual(["direct1", "pooled1"]);
		expect(ids("on:box2")).toEqual(["pooled2"]);
		expect(ids("on:build")).toEqual(["pooled1", "pooled2", "waiting1"]);
		expect(ids("on:build/box2")).toEqual(["pooled2"]);
		expect(ids("on:box")).toEqual(["direct1", "pooled1", "pooled2"]);
		expect(ids("on:local")).toEqual(["here1"]);
		expect(ids("on:box3")).toEqual([]);
	});

	it("its place reads pool/member in list, show and the page", () => {
		const now = Date.now();
		const pooled = rows()[2]!;
		expect(
			formatTable(rows(), now)
				.split("\n")
				.find((line) => line.startsWith("pooled1")),
		).toContain("build/box1");
		expect(formatDetail(pooled, now)).toMatch(/^target:\s+build\/box1$/m);
		expect(pageRow(pooled).target).toBe("build/box1");
		expect(pageRow(rows()[4]!).target).toBe("build");
	});
});
