/**
 * The page's search box in a real headless Chromium against the real web server: real pi rows, a word only
 * one tool's output holds found in that row (its match marked, a tool's markup shown as text), an archived
 * row found and opened (Archived turned on for it), nothing cut off at 360x740.
 */
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { chromiumMissing, launchBrowser, overflowing, screenshot, type Browser } from "../test-support/browser.ts";
import { createTestAgent, type TestAgent } from "../test-support/pi-harness.ts";
import { requires } from "../test-support/requires.ts";
import { serveFromPi } from "../test-support/web-server.ts";

const made: { agent?: TestAgent; browser?: Browser } = {};
afterAll(async () => {
	await made.browser?.close();
	made.agent?.cleanup();
});

async function search(page: Page, words: string): Promise<void> {
	await page.fill("#search", words);
	await page.press("#search", "Enter");
}

describe("the page's search", () => {
	it("finds a tool's output in its row, marks the match, opens an archived hit's card", async (ctx) => {
		requires(ctx, "chromium", chromiumMissing());
		const agent = createTestAgent({
			script: {
				rules: [
					{
						match: "ECHO",
						steps: [
							{
								toolCall: {
									name: "bash",
									args: { command: "printf '<img src=x onerror=window.__pwned=1> okapi%s\\n' 77" },
								},
							},
							{ text: "Printed it." },
						],
					},
				],
				fallback: [{ text: "Nothing to see." }],
			},
		});
		made.agent = agent;
		const board = boardFor(agent);
		const echo = await board.dispatch({ prompt: "ECHO the word", cwd: agent.cwd });
		const quiet = await board.dispatch({ prompt: "a quiet row", cwd: agent.cwd });
		await waitDone(board, echo.id, 90_000);
		await waitDone(board, quiet.id, 90_000);
		const served = await serveFromPi(agent, board.storeDir);
		const browser = await launchBrowser({ width: 360, height: 740 });
		made.browser = browser;
		const page = browser.page;
		await page.goto(served.login);
		await page.locator("#connection.live").waitFor();

		await search(page, "okapi77");
		const hit = page.locator(`#search-results li.hit[data-id="${echo.id}"]`);
		await hit.waitFor({ timeout: 60_000 });
		expect(await page.locator("#search-results li.hit").count()).toBe(1);
		expect(await hit.locator(".hit-where").textContent()).toBe("found in tool output");
		expect(await hit.locator(".hit-snippet mark").textContent()).toBe("okapi77");
		expect(await hit.locator(".hit-snippet").textContent()).toContain("<img src=x onerror=window.__pwned=1>");
		expect(
			await page.evaluate("[window.__pwned ?? null, document.querySelectorAll('#search-results img').length]"),
		).toEqual([null, 0]);
		await page.evaluate("document.querySelectorAll('.toast').forEach((node) => node.remove())");
		await screenshot(page, "search-360");
		expect((await overflowing(page)).join("\n")).toBe("");

		// An archived row: found, and tapping it shows the archived rows and opens its card.
		await board.archive(echo.id);
		await page.locator(`li.row[data-id="${echo.id}"]`).waitFor({ state: "detached" });
		await search(page, "okapi77 s:completed");
		await page.locator(`#search-results li.hit[data-id="${echo.id}"] .hit-tags`, { hasText: "archived" }).waitFor();
		await page.click(`#search-results li.hit[data-id="${echo.id}"] button`);
		await page.locator(`li.row[data-id="${echo.id}"] .row-head[aria-expanded="true"]`).waitFor();
		expect(await page.getAttribute("#archived", "aria-pressed")).toBe("true");

		await search(page, "nosuchwordanywhere");
		await page.locator("#search-results .hit-note", { hasText: "Nothing that ran matches" }).waitFor();
		expect(browser.errors.filter((error) => !error.includes("401")).join("\n")).toBe("");
	}, 300_000);
});
