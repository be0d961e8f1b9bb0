/**
 * The page does what the TUI does (docs/web.md's parity table), at 360x740 in a real headless Chromium
 * against the real web server and real pi workers with the scripted model: a row's diff and two
 * attempts' diff, the transcript following a streaming run, keep one attempt (its refused worktree asked
 * again), remove a worktree (git's refusal, then the force), rename, pin, a budget raised, the targets
 * table, the filter words of `/`, and a failed row's error said once. One browser, one server.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it, type TestContext } from "vitest";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { chromiumMissing, launchBrowser, overflowing, screenshot, type Browser } from "../test-support/browser.ts";
import { cloneRows } from "../test-support/clone-rows.ts";
import type { FauxStep } from "../test-support/faux-script.ts";
import { git, initRepo } from "../test-support/git-repo.ts";
import { createTestAgent, runPi, waitFor, type TestAgent } from "../test-support/pi-harness.ts";
import { requires } from "../test-support/requires.ts";
import { serveFromPi, type Served } from "../test-support/web-server.ts";
import type { BoardEngine } from "../src/board/engine/service.ts";
import { updatePolicy } from "../runner/life/policy.mjs";
import { touchNotify } from "../runner/store/fs-util.mjs";

const WRITE = `printf 'attempt %s\\n' "$AGENT_BOARD_ROW" > shared.txt`;
const WORDS = Array.from({ length: 30 }, (_, n) => `word${n}`).join(" ");
/** Turns of a streaming model, each a few hundred tokens: a 2k budget pauses the row after some of them. */
const BUDGET_STEPS: FauxStep[] = [
	...Array.from(
		{ length: 12 },
		(_, i): FauxStep => ({
			text: `Step ${i + 1}: checking the next file before I run the command.`,
			toolCall: { name: "bash", args: { command: `echo step-${i + 1}` } },
		}),
	),
	{ text: "All steps done." },
];

interface World {
	agent: TestAgent;
	repo: string;
	board: BoardEngine;
	served: Served;
	browser: Browser;
	page: Page;
}

let world: World | undefined;
const made: { agent?: TestAgent; browser?: Browser } = {};
afterAll(async () => {
	await made.browser?.close();
	made.agent?.cleanup();
});

async function setup(ctx: TestContext): Promise<World> {
	requires(ctx, "chromium", chromiumMissing());
	if (world) return world;
	const agent = createTestAgent({
		script: {
			rules: [
				// The supervisor's own request (it starts with its marker): a question no rule covers is left to the person.
				{
					match: "[agent-board supervisor request]",
					steps: [{ text: '{"decision":"ask","why":"it is your call"}' }],
				},
				{
					match: "ROUTINE",
					steps: [
						{ toolCall: { name: "ask_user", args: { question: "Should I continue with the refactor?" } } },
						{ text: "Refactor finished." },
					],
				},
				{ match: "ASK-WAIT", steps: [{ toolCall: { name: "ask_user", args: { question: "Which region?" } } }] },
				{
					match: "ATTEMPT",
					steps: [{ toolCall: { name: "bash", args: { command: WRITE } } }, { text: "Wrote my attempt." }],
				},
				{ match: "SLOW-STORY", steps: [{ text: `Once ${WORDS} the end.` }] },
				{ match: "BREAK-ME", steps: [{ error: "the provider refused: quota gone" }] },
				{ match: "BUDGETED", steps: BUDGET_STEPS },
				{ match: "RESUME-ME", steps: [{ text: "Resumed and done." }] },
			],
			fallback: [{ text: "ok" }],
		},
	});
	made.agent = agent;
	const repo = initRepo(join(agent.root, "repo"), { "shared.txt": "base\n" });
	const board = boardFor(agent);
	// A rule answers "continue" questions for the person; the supervisor's model is asked about the rest.
	mkdirSync(join(agent.agentDir, "agent-board"), { recursive: true });
	writeFileSync(
		join(agent.agentDir, "agent-board", "rules.md"),
		'# Rules\n\n## Rules\n- when question says "continue": answer "yes, continue"\n',
	);
	await updatePolicy(board.storeDir, (policy) => (policy.supervisor = { model: "faux/faux-1" }));
	const served = await serveFromPi(agent, join(agent.root, "store"));
	const browser = await launchBrowser({ width: 360, height: 740 });
	made.browser = browser;
	await browser.page.goto(served.login);
	await browser.page.locator("#connection.live").waitFor();
	world = { agent, repo, board, served, browser, page: browser.page };
	return world;
}

const card = (page: Page, id: string) => page.locator(`li.row[data-id="${id}"]`);

async function open(page: Page, id: string): Promise<void> {
	const head = card(page, id).locator(".row-head");
	await head.waitFor({ timeout: 30_000 });
	if ((await head.getAttribute("aria-expanded")) !== "true") await head.click();
}

/** Attempt #n in compare (another's "Diff vs #n" names it too). */
const attempt = (page: Page, n: number) =>
	page.locator(".attempt").filter({ has: page.locator(".attempt-head strong", { hasText: new RegExp(`^#${n}$`) }) });

async function shot(page: Page, name: string): Promise<void> {
	await page.evaluate("document.querySelectorAll('.toast').forEach((node) => node.remove())");
	await screenshot(page, name);
	expect((await overflowing(page)).join("\n")).toBe("");
}

/** The page's errors but the 400 of the budget refused on purpose. */
const pageErrors = () => (world?.browser.errors ?? []).filter((error) => !error.includes("status of 400")).join("\n");

async function toast(page: Page, text: string | RegExp): Promise<void> {
	await page.locator(".toast", { hasText: text }).first().waitFor({ timeout: 60_000 });
}

const visibleIds = async (page: Page) =>
	(
		await page
			.locator("li.row")
			.evaluateAll((nodes) => nodes.map((n) => (n as unknown as { dataset: { id: string } }).dataset.id))
	).sort();

describe("the page does what the TUI does", () => {
	it("diffs a row and two attempts, keeps one (asked again for the other's uncommitted work), and removes a worktree with the force-confirm", async (ctx) => {
		const { page, board, repo } = await setup(ctx);
		const rows = await board.dispatchAttempts({ prompt: "ATTEMPT rewrite shared.txt", cwd: repo, count: 2 });
		const single = await board.dispatch({ prompt: "ATTEMPT alone", cwd: repo, worktreeMode: "worktree" });
		for (const row of [...rows, single]) expect((await waitDone(board, row.id, 120_000)).state).toBe("completed");
		const [first, second] = rows.sort((a, b) => (a.attempt?.index ?? 0) - (b.attempt?.index ?? 0)) as [
			(typeof rows)[number],
			(typeof rows)[number],
		];

		// d: the row's diff against its branch point.
		await open(page, first.id);
		await card(page, first.id).locator(".actions button", { hasText: "Diff" }).click();
		await page.locator(".sheet-title", { hasText: "Diff:" }).waitFor();
		await page.locator(".diff-line.add", { hasText: `+attempt ${first.id}` }).waitFor();
		expect(await page.locator(".diff-line.del", { hasText: "-base" }).count()).toBe(1);
		await shot(page, "parity-diff-360");
		await page.click(".sheet .close");

		// t: the transcript of its session.
		await card(page, first.id).locator(".actions button", { hasText: "Transcript" }).click();
		await page.locator(".transcript .entry.user", { hasText: "ATTEMPT rewrite shared.txt" }).waitFor();
		await page.locator(".transcript .entry.assistant", { hasText: "Wrote my attempt." }).waitFor();
		await page.click(".sheet .close");

		// c, then space + d: the diff between the two attempts.
		await card(page, first.id).locator(".actions button", { hasText: "Compare" }).click();
		await attempt(page, 1).locator("button", { hasText: "Diff vs #2" }).click();
		await page.locator(".sheet-title", { hasText: `#2 ${second.id} vs #1 ${first.id}` }).waitFor();
		await page.locator(".diff-line.add", { hasText: `+attempt ${first.id}` }).waitFor();
		await page.locator(".diff-line.del", { hasText: `-attempt ${second.id}` }).waitFor();
		await page.locator(".sheet-content button", { hasText: "Back" }).click();

		// k: keep #1 — the plan as the TUI asks it; #2's uncommitted work is asked about again.
		await attempt(page, 1).locator("button", { hasText: "Keep this one" }).click();
		const question = page.locator(".sheet-content p").first();
		await question.filter({ hasText: "Keep #1" }).waitFor();
		expect(await question.textContent()).toMatch(
			/^Keep #1 .*: merge it into main .*then archive #2 and remove its worktree\?$/,
		);
		await page.locator(".sheet-content .warning", { hasText: "#2 has 1 uncommitted change (shared.txt)" }).waitFor();
		await shot(page, "parity-keep-360");
		await page.locator(".sheet-content button.primary", { hasText: "Keep" }).click();
		await page
			.locator(".merge-result .warning", { hasText: "Remove the worktree of #2 (shared.txt) anyway" })
			.waitFor({ timeout: 60_000 });
		expect(git(repo, "show", "HEAD:shared.txt")).toBe(`attempt ${first.id}`);
		expect(existsSync(second.worktreePath ?? "")).toBe(true);
		await page.locator(".merge-result button", { hasText: "Remove anyway" }).click();
		await toast(page, "removed 1 more worktree");
		expect(existsSync(second.worktreePath ?? "")).toBe(false);
		expect((await board.get(second.id))?.archived).toBe(true);
		await page.locator(".sheet-title", { hasText: "Attempt set" }).waitFor();
		await page.click(".sheet .close");

		// w: git refuses a worktree with changes; the page asks again, then forces.
		await open(page, single.id);
		await card(page, single.id).locator(".actions button", { hasText: "Remove worktree" }).click();
		await page.locator(".sheet-content button.danger", { hasText: "Remove" }).click();
		await page
			.locator(".merge-result .warning", { hasText: "Force-remove the worktree, losing its changes? git:" })
			.waitFor();
		expect(existsSync(single.worktreePath ?? "")).toBe(true);
		await page.locator(".merge-result button", { hasText: "Force-remove" }).click();
		await toast(page, `force-removed worktree of`);
		expect(existsSync(single.worktreePath ?? "")).toBe(false);
		// Only the main checkout and the kept attempt's worktree are left.
		const worktrees = git(repo, "worktree", "list");
		expect(worktrees.split("\n")).toHaveLength(2);
		expect(worktrees).toContain(first.worktreePath ?? "the kept worktree");
	}, 300_000);

	it("follows a streaming transcript; renames, pins and budgets a row; shows the targets; filters as / does; says a failure once", async (ctx) => {
		const { page, board, agent } = await setup(ctx);
		const story = await board.dispatch({ prompt: "SLOW-STORY go", cwd: agent.cwd, model: "faux-slow/slow-1" });
		await open(page, story.id);
		await card(page, story.id).locator(".actions button", { hasText: "Transcript" }).click();
		await page.locator(".transcript .entry.user", { hasText: "SLOW-STORY go" }).waitFor({ timeout: 30_000 });
		// The words arrive while it works, then the answer lands in the transcript: the sheet was never reopened.
		await page.locator(".sheet .stream", { hasText: /word\d/ }).waitFor({ timeout: 30_000 });
		await page.locator(".transcript .entry.assistant", { hasText: "word29 the end." }).waitFor({ timeout: 60_000 });
		await shot(page, "parity-transcript-360");
		await page.click(".sheet .close");
		await waitDone(board, story.id);

		// R: rename.
		await card(page, story.id).locator(".actions button", { hasText: "Rename" }).click();
		await page.locator(".sheet-content input").fill("the story row");
		await page.locator(".sheet-content button.primary", { hasText: "Rename" }).click();
		await toast(page, "renamed");
		await card(page, story.id).locator(".name", { hasText: "the story row" }).waitFor();
		expect((await board.get(story.id))?.name).toBe("the story row");
		// p: pin; the row lists under Pinned first.
		await card(page, story.id).locator(".actions button", { hasText: "Pin" }).click();
		await page.locator("section.group", { hasText: "Pinned (1)" }).locator(`li.row[data-id="${story.id}"]`).waitFor();
		expect((await board.get(story.id))?.pinned).toBe(true);
		// A budget, outside any question.
		await card(page, story.id).locator(".actions button", { hasText: "Budget" }).click();
		await page.locator(".sheet-content input").fill("nonsense");
		await page.locator(".sheet-content button.primary", { hasText: "Set budget" }).click();
		await page.locator(".sheet-content .form-error", { hasText: 'not an amount: "nonsense"' }).waitFor();
		await page.locator(".sheet-content input").fill("50k");
		await page.locator(".sheet-content button.primary", { hasText: "Set budget" }).click();
		await toast(page, `${story.id}: this row's budget is now 50k`);
		expect((await board.get(story.id))?.budgetLimit).toEqual({ tokens: 50_000 });
		await card(page, story.id).locator(".actions button", { hasText: "Unpin" }).click();
		await waitFor(async () => (await board.get(story.id))?.pinned === false, "the row unpinned");

		// A failed row: its error is said once, listed or opened.
		const broken = await board.dispatch({ prompt: "BREAK-ME now", cwd: agent.cwd });
		expect((await waitDone(board, broken.id)).state).toBe("failed");
		await card(page, broken.id).locator(".glyph", { hasText: "x" }).waitFor({ timeout: 30_000 });
		const saidOnce = async () => {
			// biome-ignore lint/performance/useDomNodeTextContent: what the person sees is the rendered text, hidden nodes not
			const text = await card(page, broken.id).innerText();
			expect(text.split("quota gone").length - 1, text).toBe(1);
		};
		await saidOnce();
		await open(page, broken.id);
		await card(page, broken.id)
			.locator(".details .facts")
			.waitFor({ timeout: 30_000 })
			.catch(async (error: Error) => {
				throw new Error(
					`${error.message}\n${await card(page, broken.id).innerHTML()}\n${world?.browser.errors.join("\n")}`,
				);
			});
		await saidOnce();
		await card(page, broken.id).scrollIntoViewIfNeeded();
		await shot(page, "parity-card-360");

		// The targets table, read-only.
		await page.click("#targets");
		await page.locator(".targets .target", { hasText: "local" }).waitFor();
		expect(await page.locator(".targets .target").first().textContent()).toMatch(/running \d+\/\d+ · queued \d+/);
		await shot(page, "parity-targets-360");
		await page.click(".sheet .close");

		// The filter words of `/`: a state prefix, a target, words; two states widen.
		const filter = async (text: string) => {
			await page.fill("#filter", text);
			return visibleIds(page);
		};
		expect(await filter("s:fail")).toEqual([broken.id]);
		expect(await filter("s:fail s:comp")).toContain(story.id);
		expect(await filter("s:fail s:comp")).toContain(broken.id);
		expect(await filter("on:local story")).toEqual([story.id]);
		expect(await filter("on:elsewhere")).toEqual([]);
		expect(await filter("s:")).toEqual([]);
		expect(await filter("s:nosuchstate")).toEqual([]);
		await page.fill("#filter", "");
		expect(pageErrors()).toBe("");
	}, 240_000);

	it("reports the morning: what ran, finished, failed and why, answers given by rule, questions waiting, spend; as text and on the page", async (ctx) => {
		const { page, board, agent, served } = await setup(ctx);
		const finished = await board.dispatch({
			prompt: "FINISH-ME quickly",
			cwd: agent.cwd,
			budget: { tokens: 1_000_000 },
		});
		const failed = await board.dispatch({ prompt: "BREAK-ME again", cwd: agent.cwd });
		const routine = await board.dispatch({ prompt: "ROUTINE refactor the parser", cwd: agent.cwd });
		const waiting = await board.dispatch({ prompt: "ASK-WAIT choose", cwd: agent.cwd });
		expect((await waitDone(board, finished.id)).state).toBe("completed");
		expect((await waitDone(board, failed.id)).state).toBe("failed");
		expect((await waitDone(board, routine.id, 60_000)).state).toBe("completed");
		await waitFor(
			async () => (await board.get(waiting.id))?.supervisorNote !== undefined,
			"the question left to the person",
			60_000,
		);

		const run = await runPi(agent, {
			args: ["-p", "/agent-board report --since 12h"],
			env: { AGENT_BOARD_DIR: board.storeDir },
			timeoutMs: 120_000,
		});
		expect(run.code, run.stderr).toBe(0);
		const text = run.stdout;
		expect(text).toMatch(
			/^\d+ rows ran since .*: \d+ finished, \d+ failed, .*1 waiting for you, 1 answer given for you/m,
		);
		expect(text).toContain(`? ${waiting.id} ASK-WAIT choose: Which region? (asked you because: it is your call)`);
		expect(text).toContain(`${served.base}/?row=${waiting.id}`);
		expect(text).toMatch(new RegExp(`x ${failed.id} BREAK-ME again: .*quota gone`));
		expect(text).toContain(`+ ${finished.id} FINISH-ME quickly: ok`);
		const rules = join(agent.agentDir, "agent-board", "rules.md");
		expect(text).toContain(
			`${routine.id} ROUTINE refactor the parser: "Should I continue with the refactor?" -> "yes, continue" by rule ${rules}:4`,
		);
		// The budgeted row's spend is in the ledger; the others count their usage.
		expect(text).toMatch(/Spend per target\n {2}local: [\d.]+k? tok/);
		expect(text).toMatch(/Spend per preset\n {2}\(no preset\): /);
		expect(text).toMatch(/Spend per day\n {2}\d{4}-\d\d-\d\d: /);

		await page.click("#report");
		await page.locator(".report-headline", { hasText: "1 waiting for you" }).waitFor({ timeout: 30_000 });
		const answered = page.locator(".report-section", { hasText: "Answered for you" });
		await answered
			.locator("li", { hasText: "yes, continue" })
			.locator(".meta", { hasText: `by rule ${rules}:4` })
			.waitFor();
		await page
			.locator(".report-section", { hasText: "Failed" })
			.locator("li", { hasText: "quota gone" })
			.first()
			.waitFor();
		await page.locator(".report-section", { hasText: "Spend" }).locator("h4", { hasText: "per day" }).waitFor();
		await shot(page, "parity-report-360");
		// Each row is a link: the waiting one opens on the board with its answer box.
		await page
			.locator(".report-section", { hasText: "Waiting for you" })
			.locator("a.row-link", { hasText: "ASK-WAIT" })
			.click();
		await page.locator(".sheet").waitFor({ state: "hidden" });
		await card(page, waiting.id).locator("textarea.composer-text").waitFor();
		expect(await card(page, waiting.id).getAttribute("class")).toContain("open");
		// The same link from outside (a report's URL) opens the row when the page loads.
		await page.goto(`${served.base}/?row=${failed.id}`);
		await card(page, failed.id).locator(".details .facts").waitFor({ timeout: 30_000 });
		// An archived row's link shows the archived rows and opens it, from the Report and from its URL.
		await board.archive(finished.id);
		await card(page, finished.id).waitFor({ state: "detached", timeout: 30_000 });
		await page.click("#report");
		await page
			.locator(".report-section", { hasText: "Finished" })
			.locator("a.row-link", { hasText: "FINISH-ME" })
			.click();
		await page.locator(".sheet").waitFor({ state: "hidden" });
		await card(page, finished.id).locator(".details .facts").waitFor({ timeout: 30_000 });
		expect(await page.locator("#archived").getAttribute("aria-pressed")).toBe("true");
		await page.goto(`${served.base}/?row=${finished.id}`);
		await card(page, finished.id).locator(".details .facts").waitFor({ timeout: 30_000 });
		expect(await card(page, finished.id).locator("button", { hasText: "Unarchive" }).count()).toBe(1);
		expect(pageErrors()).toBe("");
	}, 240_000);

	it("resumes a finished row by Reply and shows its attach command; raises a paused budget; Escape closes; a refused new agent keeps its form", async (ctx) => {
		const { page, board, agent } = await setup(ctx);
		// o on a finished row: the command that opens its session in a terminal; r: Reply resumes it.
		const done = await board.dispatch({ prompt: "FINISH-FIRST then resume", cwd: agent.cwd });
		expect((await waitDone(board, done.id)).state).toBe("completed");
		await open(page, done.id);
		const session = (await board.get(done.id))?.sessionFile ?? "the session file";
		const quote = (text: string) => (/^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`);
		await card(page, done.id)
			.locator(".facts dd", { hasText: `cd ${quote(agent.cwd)} && pi --session ${quote(session)}` })
			.waitFor({ timeout: 30_000 });
		await card(page, done.id).locator("textarea.composer-text").fill("RESUME-ME please");
		await card(page, done.id).locator(".composer button", { hasText: "Reply" }).click();
		await waitFor(
			async () => (await board.get(done.id))?.latestAssistant === "Resumed and done.",
			"the row resumed by the page's Reply",
			60_000,
		);
		const resumed = await waitDone(board, done.id);
		expect(resumed.state).toBe("completed");
		await card(page, done.id).locator(".summary", { hasText: "Resumed and done." }).waitFor({ timeout: 30_000 });

		// A row its budget paused goes on when the page raises the budget (Budget on the opened row).
		const budgeted = await board.dispatch({
			prompt: "BUDGETED walk the files",
			cwd: agent.cwd,
			model: "faux-stream/stream-1",
			budget: { tokens: 2000 },
		});
		const pausedAfter = (spent: number) =>
			waitFor(
				async () => {
					const row = await board.get(budgeted.id);
					return row?.budget?.paused && (row.budget.spent ?? 0) > spent ? row : undefined;
				},
				"the row paused at its budget",
				90_000,
			);
		const first = await pausedAfter(0);
		await open(page, budgeted.id);
		await card(page, budgeted.id)
			.locator(".question-text", { hasText: "budget reached: 2k tokens; raise or stop" })
			.waitFor({ timeout: 30_000 });
		// The budget's question, answered in the answer box as in the TUI: it goes on to the new budget.
		const spent = first.budget?.spent ?? 0;
		await card(page, budgeted.id)
			.locator("textarea.composer-text")
			.fill(`raise to ${spent + 1000}`);
		await card(page, budgeted.id).locator(".composer button", { hasText: "Answer" }).click();
		await pausedAfter(spent);
		await card(page, budgeted.id).locator(".question-text", { hasText: "budget reached:" }).waitFor();
		await card(page, budgeted.id).locator(".actions button", { hasText: "Budget" }).click();
		await page.locator(".sheet-content input").fill("1M");
		await page.locator(".sheet-content button.primary", { hasText: "Set budget" }).click();
		await toast(page, `${budgeted.id}: this row's budget is now 1M tokens; it goes on in the same process`);
		const walked = await waitDone(board, budgeted.id, 120_000);
		expect(walked).toMatchObject({ state: "completed", latestAssistant: "All steps done." });

		// escape: a sheet closes.
		await page.click("#targets");
		await page.locator(".targets .target").first().waitFor();
		await page.keyboard.press("Escape");
		await page.locator(".sheet").waitFor({ state: "hidden" });

		// n: a refusal stays in the form with its reason, the prompt kept (the refusal is the one error).
		expect(pageErrors()).toBe("");
		const before = world?.browser.errors.length ?? 0;
		await page.click("#new");
		await page.fill("textarea.prompt", "NOWHERE go");
		await page.click("details summary");
		await page.locator("label.field", { hasText: "cwd" }).locator("input").fill(join(agent.root, "no-such-dir"));
		await page.click("button:has-text('Start')");
		await page
			.locator(".sheet-content .form-error", { hasText: "not started: working directory does not exist:" })
			.waitFor({ timeout: 30_000 });
		expect(await page.inputValue("textarea.prompt")).toBe("NOWHERE go");
		await shot(page, "parity-refused-360");
		await page.keyboard.press("Escape");
		await page.locator(".sheet").waitFor({ state: "hidden" });
		expect((await board.list()).some((row) => row.name.includes("NOWHERE"))).toBe(false);
		expect(world?.browser.errors.slice(before).join("\n")).toMatch(/^console: .*status of 409 \(Conflict\)$/);
		// That refusal was on purpose: a later test's check of the page's errors starts clean.
		world?.browser.errors.splice(before);
	}, 300_000);

	it("lists a group's first 50 rows and Show more; a link to a row beyond them opens it; every button says what it does; a link opened logged out logs in first, then opens its row", async (ctx) => {
		const { page, board, agent, served } = await setup(ctx);
		const seed = await board.dispatch({ prompt: "SEED for the long list", cwd: agent.cwd });
		expect((await waitDone(board, seed.id)).state).toBe("completed");
		// 70 real finished rows, copied on disk; the board hears of each as of any row's change.
		const clones = cloneRows(board.storeDir, seed.id, 0, 70, (n) => `CLONED row ${n}`);
		for (const id of clones) touchNotify(board.storeDir, id);
		await page.goto(`${served.base}/`);
		const more = page.locator("section.group button.more:visible", { hasText: /^Show \d+ more of \d+$/ });
		await more.waitFor({ timeout: 60_000 });
		const title = (await page
			.locator("section.group")
			.filter({ has: page.locator("button.more:visible") })
			.locator("h2.group-title")
			.textContent()) as string;
		const group = page.locator("section.group").filter({ has: page.locator("h2.group-title", { hasText: title }) });
		expect(await group.locator("li.row").count()).toBe(50);
		const shown = new Set(await visibleIds(page));
		const beyond = clones.find((id) => !shown.has(id));
		expect(beyond).toBeDefined();
		await more.click();
		await card(page, beyond ?? "").waitFor();
		expect(await group.locator("li.row").count()).toBeGreaterThan(50);
		// A link to a row beyond the first 50 (a report's, a notice's) shows its group as far as it.
		await page.goto(`${served.base}/?row=${beyond}`);
		await card(page, beyond ?? "")
			.locator(".details .facts")
			.waitFor({ timeout: 30_000 });
		// ?: each button says what it does (its words, or a label for a symbol).
		await open(page, seed.id);
		const unnamed = await page
			.locator("button:visible")
			.evaluateAll((nodes) =>
				nodes
					.filter(
						(n) =>
							!/\w{2,}/.test(
								`${n.textContent ?? ""} ${n.getAttribute("aria-label") ?? ""} ${n.getAttribute("title") ?? ""}`,
							),
					)
					.map((n) => n.outerHTML.slice(0, 120)),
			);
		expect(unnamed.join("\n")).toBe("");
		expect(pageErrors()).toBe("");

		// A row's link (a notifier's) opened with no cookie: log in first, then the row opens, its answer box too.
		const errors = world?.browser.errors ?? [];
		const before = errors.length;
		await world?.browser.context.clearCookies();
		const refused = await page.goto(`${served.base}/?row=${seed.id}&answer=1`);
		expect(refused?.status()).toBe(401);
		expect(await page.textContent("body")).toContain("Then this link opens its row.");
		await page.goto(served.login);
		await page.waitForURL(`${served.base}/?row=${seed.id}&answer=1`);
		await card(page, seed.id).locator(".details .facts").waitFor({ timeout: 30_000 });
		// Once: a later login goes to the board.
		await page.goto(served.login);
		await page.waitForURL(`${served.base}/`);
		expect(errors.slice(before).filter((error) => !error.includes("401"))).toEqual([]);
		errors.splice(before);
	}, 240_000);
});
