/**
 * The page is made of the files loadPage serves and nothing else: every module a page file imports
 * (its own or one shared from runner/, like time-words.mjs) must be served, or the browser's import fails
 * and the whole page with it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatAge } from "../runner/time-words.mjs";
import { loadPage, PAGE_DIR } from "../src/web/server/static-files.ts";

const importsOf = (source: string): string[] =>
	[...source.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gms)].map((match) => match[1] ?? "");

describe("the page's files", () => {
	const page = loadPage();

	it("serves every module a served module imports", () => {
		const served = [...page.keys()].filter((name) => /\.m?js$/.test(name));
		expect(served).toContain("/time-words.mjs");
		for (const name of served) {
			const body = page.get(name)?.body.toString("utf8") ?? "";
			for (const spec of importsOf(body)) {
				expect(spec, `${name} imports ${spec}`).toMatch(/^\.\/[\w-]+\.m?js$/);
				expect(page.has(spec.slice(1)), `${name} imports ${spec}, which is not served`).toBe(true);
			}
		}
	});

	it("serves the board's own formatAge to the page, the same bytes as runner/time-words.mjs", () => {
		const shared = page.get("/time-words.mjs");
		expect(shared?.type).toMatch(/^text\/javascript/);
		expect(shared?.body.equals(readFileSync(join(PAGE_DIR, "..", "..", "..", "runner", "time-words.mjs")))).toBe(
			true,
		);
		expect(importsOf(readFileSync(join(PAGE_DIR, "dom.js"), "utf8"))).toContain("./time-words.mjs");
		expect([formatAge(12_000), formatAge(4 * 60_000), formatAge(3 * 3_600_000), formatAge(50 * 3_600_000)]).toEqual([
			"12s",
			"4m",
			"3h",
			"2d",
		]);
		expect(formatAge(Date.now())).toBe("?");
	});
});
