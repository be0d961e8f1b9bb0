/**
 * The board in a real headless Chromium against the real web server and real pi workers with the
 * scripted model: log in with the URL `serve` printed, a row streams, a question is answered from the
 * page in place (the worker's next request carries it), steer and stop, an attempt set compared and
 * merged with the TUI's plan and conflict report, a preset from the form, model text shown as text, nothing cut off at
 * 360x740 (screenshots in test-artifacts/web/), notifications, and the server living on after pi.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it, type TestContext } from "vitest";
import { requires } from "../test-support/requires.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { chromiumMissing, launchBrowser, overflowing, screenshot, type Browser } from "../test-support/browser.ts";
import { git, initRepo } from "../test-support/git-repo.ts";
import {
	allSystemText,
	createTestAgent,
	runPi,
	userTexts,
	waitFor,
	type TestAgent,
} from "../test-support/pi-harness.ts";
import { serveFromPi, type Served } from "../test-support/web-server.ts";
import type { BoardEngine } from "../src/board/engine/service.ts";
import { liveRecord } from "../src/web/web-files.ts";
import { isAlive } from "../runner/store/proc.mjs";

const STREAM_WORDS = Array.from({ length: 36 }, (_, n) => `streamed${n}`).join(" ");
const WRITE = `printf 'attempt %s\\n' "$AGENT_BOARD_ROW" > shared.txt`;
const XSS = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> markup stays text`;

interface World {
	agent: TestAgent;
	store: string;
	repo: string;
	board: BoardEngine;
	served: Served;
	browser: Browser;
	page: Page;
}

let world: World | undefined;
/** Cleaned up even when the set-up fails half way (its server, started by pi, would live on). */
const made: { agent?: TestAgent; browser?: Browser } = {};
afterAll(async () => {
	await made.browser?.close();
	made.agent?.cleanup();
});

/** Records the notifications the page shows (through its service worker or the Notification constructor). */
const RECORD_NOTIFICATIONS = `(() => {
	window.__notes = [];
	const show = ServiceWorkerRegistration.prototype.showNotification;
	ServiceWorkerRegistration.prototype.showNotification = function (title, options) { window.__notes.push(title); return show.call(this, title, options); };
	const Original = window.Notification;
	window.Notification = class extends Original { constructor(title, options) { super(title, options); window.__notes.push(title); } };
})()`;

async function setup(ctx: TestContext): Promise<World> {
	requires(ctx, "chromium", chromiumMissing());
	if (world) return world;
	const agent = createTestAgent({
		script: {
			rules: [
				{ match: "STREAM-ME", steps: [{ text: `Begin ${STREAM_WORDS} finished.` }] },
				{
					match: "ASK-DB",
					steps: [
						{ toolCall: { name: "ask_user", args: { question: "Which database?", options: ["pg", "sqlite"] } } },
						{ text: "Using the answer now." },
					],
				},
				{
					match: "LONG-TOOL",
					steps: [
						{ toolCall: { name: "bash", args: { command: "while [ ! -e RELEASE ]; do sleep 0.1; done" } } },
						{ text: "Plan A finished." },
					],
				},
				{ match: "STEER-NOW", steps: [{ text: "Steered: switching to plan B." }] },
				{ match: "FOLLOW-NEXT", steps: [{ text: "Follow-up answered." }] },
				{ match: "STALL-ME", steps: [{ stall: true }] },
				{
					match: "ATTEMPT",
					steps: [{ toolCall: { name: "bash", args: { command: WRITE } } }, { text: "Wrote my attempt." }],
				},
				{ match: "XSS-ME", steps: [{ text: XSS }] },
			],
			fallback: [{ text: "ok" }],
		},
	});
	made.agent = agent;
	// A preset in pi's agents/*.md format, for the new-agent form.
	mkdirSync(join(agent.agentDir, "agents"), { recursive: true });
	writeFileSync(
		join(agent.agentDir, "agents", "quick.md"),
		"---\nname: quick\ndescription: answers fast\nmodel: faux/faux-2\n---\nPRESET-SYSTEM-TEXT be quick.\n",
	);
	const store = join(agent.root, "store");
	const repo = initRepo(join(agent.root, "repo"), { "shared.txt": "base\n" });
	const board = boardFor(agent);
	const served = await serveFromPi(agent, store);
	const browser = await launchBrowser({ width: 360, height: 740 });
	made.browser = browser;
	await browser.page.addInitScript(RECORD_NOTIFICATIONS);
	world = { agent, store, repo, board, served, browser, page: browser.page };
	return world;
}

const card = (page: Page, id: string) => page.locator(`li.row[data-id="${id}"]`);

/** Toasts come and go: a screenshot of the layout is taken without them. */
async function layoutShot(page: Page, name: string, fullPage = false): Promise<void> {
	await page.evaluate("document.querySelectorAll('.toast').forEach((node) => node.remove())");
	await screenshot(page, name, { fullPage });
	// Joined, so a failure prints what overflowed (an array of long strings prints as "[ Array(1) ]").
	expect((await overflowing(page)).join("\n")).toBe("");
}

async function rowByPrompt(board: BoardEngine, text: string) {
	return waitFor(async () => (await board.list()).find((row) => row.name.includes(text)), `a row for ${text}`, 30_000);
}

async function dispatchFromPage(
	page: Page,
	prompt: string,
	options: { model?: string; cwd?: string; count?: string } = {},
): Promise<void> {
	await page.click("#new");
	await page.fill("textarea.prompt", prompt);
	if (options.model || options.cwd || options.count) {
		await page.click("details summary");
		if (options.model) await page.locator("label.field", { hasText: "model" }).locator("input").fill(options.model);
		if (options.cwd) await page.locator("label.field", { hasText: "cwd" }).locator("input").fill(options.cwd);
		if (options.count)
			await page.locator("label.field", { hasText: "attempts" }).locator("select").selectOption(options.count);
	}
	await page.click("button:has-text('Start')");
	await page.locator(".sheet").waitFor({ state: "hidden" });
}

describe("the board in a browser", () => {
	it("logs in with the printed URL, shows a row streaming, and answers a question from the page in place", async (ctx) => {
		const { page, served, board, agent } = await setup(ctx);
		// The server outlived the pi that started it.
		expect(isAlive(served.record.pid, served.record.start)).toBe(true);
		await page.goto(served.login);
		await page.waitForURL(`${served.base}/`);
		expect(page.url()).not.toContain("token");
		await page.locator("#connection.live").waitFor();

		await dispatchFromPage(page, "STREAM-ME tell a long story", { model: "faux-slow/slow-1" });
		const streaming = await rowByPrompt(board, "STREAM-ME");
		// Words arrive while the run still works: the page shows them on a working row, before the answer ends.
		const selector = `li.row[data-id="${streaming.id}"]`;
		const live = `[document.querySelector('${selector} .glyph')?.textContent, document.querySelector('${selector} .stream')?.textContent ?? ""]`;
		await waitFor(
			async () => {
				const [glyph, text] = (await page.evaluate(live)) as [string, string];
				return glyph === ">" && /streamed\d/.test(text) && !text.includes("finished");
			},
			"streamed words on a working row",
			30_000,
		);
		await card(page, streaming.id).locator(".glyph", { hasText: "+" }).waitFor({ timeout: 60_000 });
		// The list shows the start of a long answer; the opened row shows it whole.
		await card(page, streaming.id).locator(".row-head").click();
		await card(page, streaming.id).locator(".summary", { hasText: "streamed35" }).waitFor();

		await dispatchFromPage(page, "ASK-DB set up the cache");
		const asking = await rowByPrompt(board, "ASK-DB");
		const question = card(page, asking.id).locator(".question-text");
		await question.waitFor({ timeout: 30_000 });
		expect(await question.textContent()).toBe("Which database?");
		await card(page, asking.id).scrollIntoViewIfNeeded();
		await layoutShot(page, "question-360");
		await card(page, asking.id).locator("button.choice", { hasText: "sqlite" }).click();
		const done = await waitDone(board, asking.id);
		expect(done).toMatchObject({
			state: "completed",
			latestAssistant: "Using the answer now.",
			currentRunId: asking.currentRunId,
		});
		// Answered in place: the same worker process made the next request, with the answer as the tool's result.
		const calls = agent.calls().filter((call) => userTexts(call).some((text) => text.includes("ASK-DB")));
		expect(calls).toHaveLength(2);
		expect(calls[0]?.pid).toBe(calls[1]?.pid);
		expect(JSON.stringify(calls[1]?.messages.filter((m) => m.role === "toolResult"))).toContain("sqlite");
		await card(page, asking.id).locator(".glyph", { hasText: "+" }).waitFor();
	}, 180_000);

	it("steers a working row and stops another from the page", async (ctx) => {
		const { page, board, agent } = await setup(ctx);
		const long = await board.dispatch({ prompt: "LONG-TOOL task", cwd: agent.cwd });
		await card(page, long.id).locator(".activity", { hasText: "bash" }).waitFor({ timeout: 30_000 });
		await card(page, long.id).locator(".row-head").click();
		await card(page, long.id).locator("textarea.composer-text").fill("STEER-NOW use plan B");
		await card(page, long.id).locator("button", { hasText: "Steer" }).click();
		await page.locator(".toast", { hasText: "steered into the running agent" }).waitFor();
		await card(page, long.id).locator(".receipts li.delivered", { hasText: "as steer" }).waitFor();
		await card(page, long.id).locator("textarea.composer-text").fill("FOLLOW-NEXT one more thing");
		await card(page, long.id).locator("button", { hasText: "Follow-up" }).click();
		await page.locator(".toast", { hasText: "queued as a follow-up" }).waitFor();
		writeFileSync(join(agent.cwd, "RELEASE"), "");
		const steered = await waitDone(board, long.id);
		// One worker took the task, the steer and the follow-up, in that order.
		expect(steered.latestAssistant).toBe("Follow-up answered.");
		expect(steered.receipts?.map((r) => [r.status, r.as])).toEqual([
			["delivered", "steer"],
			["delivered", "followUp"],
		]);
		const steerCall = agent.calls().find((call) => userTexts(call).some((text) => text.includes("STEER-NOW")));
		expect(steerCall && userTexts(steerCall)).toEqual(["LONG-TOOL task", "STEER-NOW use plan B"]);
		const followCall = agent.calls().find((call) => userTexts(call).some((text) => text.includes("FOLLOW-NEXT")));
		expect(JSON.stringify(followCall?.messages)).toContain("Steered: switching to plan B.");

		const stalled = await board.dispatch({ prompt: "STALL-ME forever", cwd: agent.cwd });
		await card(page, stalled.id)
			.locator(".activity", { hasText: "waiting for the model" })
			.waitFor({ timeout: 30_000 });
		await card(page, stalled.id).locator(".row-head").click();
		const stop = card(page, stalled.id).locator("button.danger");
		await stop.click();
		await card(page, stalled.id).locator("button.danger", { hasText: "Really stop?" }).click();
		await card(page, stalled.id).locator(".glyph", { hasText: "-" }).waitFor({ timeout: 30_000 });
		expect((await board.get(stalled.id))?.state).toBe("stopped");
	}, 180_000);

	it("compares an attempt set and merges one with the TUI's plan; the other's conflict offers the follow-up", async (ctx) => {
		const { page, board, repo } = await setup(ctx);
		await dispatchFromPage(page, "ATTEMPT rewrite shared.txt", { cwd: repo, count: "2" });
		const rows = await waitFor(
			async () => {
				const found = (await board.list()).filter((row) => row.name.includes("ATTEMPT"));
				return found.length === 2
					? found.sort((a, b) => (a.attempt?.index ?? 0) - (b.attempt?.index ?? 0))
					: undefined;
			},
			"two attempts",
			30_000,
		);
		for (const row of rows) expect((await waitDone(board, row.id, 120_000)).state).toBe("completed");
		const [first, second] = rows as [(typeof rows)[number], (typeof rows)[number]];
		await card(page, first.id).locator(".glyph", { hasText: "+" }).waitFor({ timeout: 30_000 });
		await card(page, first.id).locator(".row-head").click();
		await card(page, first.id).locator("button", { hasText: "Compare" }).click();
		await page.locator(".sheet-title", { hasText: "Attempt set" }).waitFor();
		await page
			.locator(".attempt")
			.filter({ has: page.locator(".attempt-head strong", { hasText: /^#2$/ }) })
			.waitFor();
		expect(await page.locator(".attempt").count()).toBe(2);
		expect(await page.locator(".attempt").first().textContent()).toContain("files: shared.txt");
		await layoutShot(page, "compare-360");
		await page
			.locator(".attempt")
			.filter({ has: page.locator(".attempt-head strong", { hasText: /^#1$/ }) })
			.locator("button", { hasText: "Merge this one" })
			.click();
		await page.locator(".sheet-title", { hasText: "Merge" }).waitFor();
		expect(await page.locator(".sheet-content p").first().textContent()).toMatch(
			/^Merge .*ATTEMPT.* \(agent-board\/.*\) into main: .*uncommitted change.*\?$/,
		);
		await page.locator(".sheet-content button.primary", { hasText: "Merge" }).click();
		await page.locator(".toast", { hasText: `into main` }).waitFor({ timeout: 60_000 });
		expect(git(repo, "show", "HEAD:shared.txt")).toBe(`attempt ${first.id}`);
		// As the TUI after y: the merged worktree may go now.
		await page.locator(".merge-result button", { hasText: "Remove worktree" }).click();
		await page.locator(".toast", { hasText: "removed worktree of" }).waitFor({ timeout: 60_000 });
		expect(existsSync(first.worktreePath ?? "")).toBe(false);
		// Back in compare: the second attempt now conflicts; the plan says so, and the merge changes nothing.
		await page.locator(".sheet-title", { hasText: "Attempt set" }).waitFor();
		await page.locator(".attempt", { hasText: "merged → main" }).waitFor();
		const head = git(repo, "rev-parse", "HEAD");
		await page
			.locator(".attempt")
			.filter({ has: page.locator(".attempt-head strong", { hasText: /^#2$/ }) })
			.locator("button", { hasText: "Merge this one" })
			.click();
		await page
			.locator(".sheet-content p.warning", { hasText: "will conflict in shared.txt" })
			.waitFor({ timeout: 60_000 });
		await page.locator(".sheet-content button.primary", { hasText: "Merge" }).click();
		const followUp = page.locator(".merge-result textarea");
		await followUp.waitFor({ timeout: 60_000 });
		expect(await followUp.inputValue()).toContain("Bring your branch");
		expect(await page.locator(".merge-result .error-text").textContent()).toContain("merge conflict in shared.txt");
		expect(git(repo, "rev-parse", "HEAD")).toBe(head);
		expect((await board.get(second.id))?.merged).toBeUndefined();
		await page.click(".sheet .close");
		// The opened row's own Merge (the TUI's m on a row): the same plan, asked from the row; Cancel changes nothing.
		await card(page, second.id).locator(".row-head").click();
		await card(page, second.id).getByRole("button", { name: "Merge", exact: true }).click();
		await page.locator(".sheet-title", { hasText: "Merge" }).waitFor();
		await page
			.locator(".sheet-content p.warning", { hasText: "will conflict in shared.txt" })
			.waitFor({ timeout: 60_000 });
		await page.locator(".sheet-content button", { hasText: "Cancel" }).click();
		await page.locator(".sheet-title", { hasText: "Merge" }).waitFor({ state: "hidden" });
		expect(git(repo, "rev-parse", "HEAD")).toBe(head);
		expect((await board.get(second.id))?.merged).toBeUndefined();
	}, 300_000);

	it("shows a model's markup as text, fits 360x740, and notifies when a row completes", async (ctx) => {
		const { page, board, agent } = await setup(ctx);
		// Not allowed yet: nothing so far was notified. The permission the user gives when asked:
		expect(await page.locator("#notify").textContent()).toBe("Notify me");
		expect(((await page.evaluate("window.__notes")) as string[]).join("\n")).toBe("");
		await world?.browser.context.grantPermissions(["notifications"], { origin: world.served.base });
		await page.click("#notify");
		await page.locator("#notify", { hasText: "Notifying" }).waitFor();
		// A preset from the form: its choices fill the form, and the run gets its model and system text.
		await page.click("#new");
		await page.locator("label.field", { hasText: "preset" }).locator("select").selectOption("quick");
		await page.locator(".choices-summary", { hasText: "preset quick" }).waitFor();
		await page.locator(".sheet-content .meta", { hasText: "answers fast" }).waitFor();
		await page.fill("textarea.prompt", "PRESET-RUN go");
		await page.click("button:has-text('Start')");
		await page.locator(".sheet").waitFor({ state: "hidden" });
		const preset = await waitDone(board, (await rowByPrompt(board, "PRESET-RUN")).id);
		expect(preset.model).toBe("faux/faux-2");
		const presetCall = agent.calls().find((call) => userTexts(call).some((text) => text.includes("PRESET-RUN")));
		expect(presetCall && allSystemText(presetCall)).toContain("PRESET-SYSTEM-TEXT be quick.");

		const row = await board.dispatch({ prompt: `XSS-ME ${XSS}`, cwd: agent.cwd });
		await waitDone(board, row.id);
		const summary = card(page, row.id).locator(".summary");
		await summary.filter({ hasText: "markup stays text" }).waitFor({ timeout: 30_000 });
		expect(await summary.textContent()).toContain('<img src=x onerror="window.__pwned=2">');
		expect(await card(page, row.id).locator(".name").textContent()).toContain("<script>");
		await card(page, row.id).locator(".row-head").click();
		// Opened: the whole answer once, in the summary (its "Latest answer" would say it again).
		await card(page, row.id).locator(".details .facts").waitFor();
		expect(await card(page, row.id).locator(".summary").textContent()).toContain("markup stays text");
		expect(await card(page, row.id).locator(".details pre", { hasText: "markup stays text" }).count()).toBe(0);
		expect(
			await page.evaluate("[window.__pwned ?? null, document.querySelectorAll('main img, main script').length]"),
		).toEqual([null, 0]);
		await page.locator(".toast", { hasText: "completed" }).first().waitFor();
		await waitFor(
			async () =>
				((await page.evaluate("window.__notes")) as string[]).some(
					(title) => title.startsWith("XSS-ME") && title.endsWith("completed"),
				),
			"a system notification",
			10_000,
		);
		await page.evaluate("window.scrollTo(0, 0)");
		await layoutShot(page, "board-360");
		await layoutShot(page, "board-360-whole", true);
		await page.click("#new");
		await page.click("details summary");
		await layoutShot(page, "new-agent-360");
		await page.click(".sheet .close");
		// Archive from the card: it leaves the list; Archived shows it again, and unarchive brings it back.
		await card(page, row.id).locator("button", { hasText: "Archive" }).click();
		await card(page, row.id).waitFor({ state: "detached" });
		expect((await board.get(row.id))?.archived).toBe(true);
		await page.click("#archived");
		const head = card(page, row.id).locator(".row-head");
		if ((await head.getAttribute("aria-expanded")) !== "true") await head.click();
		await card(page, row.id).locator("button", { hasText: "Unarchive" }).click();
		await waitFor(async () => (await board.get(row.id))?.archived === false, "the row unarchived");
		await page.click("#archived");
		await card(page, row.id).locator(".glyph", { hasText: "+" }).waitFor();
		expect(world?.browser.errors.filter((error) => !error.includes("401")).join("\n")).toBe("");
	}, 120_000);

	it("lives on without pi: a second pi's board sees the same rows; rotate logs the browser out; stop ends it", async (ctx) => {
		const { page, store, agent, served, board } = await setup(ctx);
		const command = (args: string) =>
			runPi(agent, { args: ["-p", `/agent-board ${args}`], env: { AGENT_BOARD_DIR: store }, timeoutMs: 120_000 });
		const listed = await command("list");
		expect(listed.code, listed.stderr).toBe(0);
		for (const row of await board.list()) expect(listed.stdout).toContain(row.id);
		const status = await command("serve --status");
		expect(status.stdout).toContain(`pid ${served.record.pid}`);
		expect(status.stdout).not.toContain(served.token);
		const again = await command("serve --port 0");
		expect(again.stdout).toContain("already serving");
		expect(again.stdout).not.toContain("token=");

		const rotated = await command("serve --rotate");
		const login = /http:\/\/\S+\/login\?token=([A-Za-z0-9_-]+)/.exec(rotated.stdout);
		expect(login?.[1]).toBeTruthy();
		expect(login?.[1]).not.toBe(served.token);
		await page.locator("#logged-out").waitFor({ timeout: 30_000 });
		await page.goto(login?.[0] ?? "");
		await page.locator("#connection.live").waitFor();

		const stopped = await command("serve --stop");
		expect(stopped.stdout).toContain(`stopped (pid ${served.record.pid})`);
		expect(isAlive(served.record.pid, served.record.start)).toBe(false);
		expect(liveRecord(store)).toBeUndefined();
	}, 240_000);
});
