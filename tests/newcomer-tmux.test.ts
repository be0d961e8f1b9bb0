/**
 * What a new user still tripped on (#28), in real pi under tmux at 80x24 and 160x45, typed at a
 * person's pace, with the real engine and workers in a git repository: pi started from the project
 * through `npm run --prefix <checkout> pi`; the cursor on the asking row at first paint and staying
 * on its row as rows change groups; the stop question under the list; the live console at the
 * board's whole height following a stream past its status tail, with a steer shown at once and then
 * where it landed; an answer in the transcript; two attempts told apart, not flagged as overlapping,
 * one kept (merged, the other archived with its worktree, asked twice for its uncommitted work); a
 * merge with nothing to merge saying so whole.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { cloneRows } from "../test-support/clone-rows.ts";
import { git, initRepo } from "../test-support/git-repo.ts";
import { waitFor } from "../test-support/pi-harness.ts";
import type { TmuxSession } from "../test-support/tmux.ts";
import { boardOf, clearFilter, only, openBoard, useBoardTmux } from "../test-support/tmux-board.ts";

const tb = useBoardTmux();

const WORDS = Array.from({ length: 600 }, (_, i) => `s${String(i).padStart(4, "0")}`).join(" ");
const WRITE = `printf 'attempt %s\\n' "$AGENT_BOARD_ROW" > shared.txt && printf 'mine\\n' > "own-$AGENT_BOARD_ROW.txt"`;

const cursorLine = (screen: string) => screen.split("\n").find((line) => line.startsWith(">")) ?? "";
const flat = (screen: string) => screen.replace(/\s+/g, " ");
const lineOf = (screen: string, pattern: RegExp) => screen.split("\n").findIndex((line) => pattern.test(line));

async function waitFlat(t: TmuxSession, text: string): Promise<string> {
	return waitFor(
		() => (flat(t.screen()).includes(text) ? t.screen() : ""),
		() => `screen to show ${text}\n--- last screen ---\n${t.screen()}`,
		30_000,
	);
}

async function newcomer(ctx: TestContext, width: number, height: number): Promise<void> {
	const agent = tb.agent();
	const gates = join(agent.root, "gates");
	mkdirSync(gates);
	// Each gated row waits for a file named after it: the test lets each go on its own.
	const gate = `while [ ! -f '${gates}'/"$AGENT_BOARD_ROW" ]; do sleep 0.2; done`;
	agent.writeScript({
		rules: [
			{
				match: "ASK which database",
				steps: [
					{
						toolCall: {
							name: "ask_user",
							args: { question: "Which database should the cache use?", options: ["Postgres", "SQLite"] },
						},
					},
					{ text: "Going with Postgres." },
				],
			},
			{
				match: "GATED",
				steps: [
					{ toolCall: { name: "bash", args: { command: gate } }, text: "Starting the console job." },
					{ text: "Console job done." },
				],
			},
			{ match: "also print the total", steps: [{ text: "Noted the steer: total printed." }] },
			{ match: "STREAM", steps: [{ waitForFile: join(gates, "stream"), then: { text: WORDS } }] },
			{
				match: "greeting",
				steps: [{ toolCall: { name: "bash", args: { command: WRITE } } }, { text: "Wrote my attempt." }],
			},
			{ match: "NOTHING", steps: [{ text: "Nothing to change here." }] },
		],
		fallback: [{ text: "Done: wrote the file." }],
	});
	const repo = initRepo(join(agent.root, "repo"), { "shared.txt": "base\n", "README.md": "# project\n" });
	const service = boardOf(agent);
	const state = async (id: string) => (await service.get(id))?.state;

	// Seventeen finished rows (one real run, copied on disk), one asking, one running.
	const seed = await service.dispatch({ prompt: "seed row", cwd: repo });
	await waitFor(async () => (await state(seed.id)) === "completed", "the seed row to finish", 60_000);
	cloneRows(join(agent.agentDir, "agent-board"), seed.id, 1, 17);
	const asker = await service.dispatch({ prompt: "ASK which database", cwd: repo });
	const background = await service.dispatch({ prompt: "GATED background job", cwd: repo });
	await waitFor(
		async () =>
			(await state(asker.id)) === "needs_input" && (await service.get(background.id))?.live?.tool !== undefined,
		"one row asking, one running",
		60_000,
	);

	// From the project, the README's way: pi works in the project, not in the package's checkout.
	const t = await tb.start(ctx, agent, { width, height, viaScript: true, cwd: repo });
	await t.waitForText(`${basename(agent.root)}/repo`);

	// First paint: the cursor on the first row of the top group, the one asking.
	await openBoard(t);
	await t.waitForText(/Agent board 19 rows/);
	expect(cursorLine(t.screen())).toContain("ASK which database");
	// The running row finishes and moves groups: the cursor stays on its row.
	writeFileSync(join(gates, background.id), "go");
	await t.waitForText(/Completed \(18\)/, 60_000);
	expect(cursorLine(t.screen())).toContain("ASK which database");
	t.keys("r");
	await t.waitForText("Answer ASK which database");
	t.keys("Tab");
	await t.waitForText(/^ Postgres\s*$/m);
	t.keys("Enter");
	await t.waitForText("answered ASK which database");
	// Answered, it finishes and moves groups too: still under the cursor; its transcript has the answer where it landed.
	await t.waitForText(/Completed \(19\)/, 60_000);
	expect(cursorLine(t.screen())).toContain("ASK which database");
	t.keys("t");
	await t.waitForText(/^you\s+\(answer\) Postgres/m);
	t.keys("Escape");
	await t.waitForGone("Transcript:");

	// The stop question keeps the list in sight.
	const stopMe = await service.dispatch({ prompt: "GATED okapi job", cwd: repo });
	await only(t, "okapi");
	expect(t.screen()).not.toMatch(/\besc\b/);
	await t.waitForText(/Working \(1\)\n>.*GATED okapi job/);
	t.keys("s");
	const asked = await t.waitForText("(y/n) Stop GATED okapi job?");
	expect(asked).toMatch(/Working \(1\)\n>.*GATED okapi job[\s\S]*\(y\/n\) Stop GATED okapi job\?/);
	t.keys("y");
	await t.waitForText(/Stopped \(1\)/, 60_000);
	expect(await state(stopMe.id)).toBe("stopped");
	await clearFilter(t);

	// The console: the board's whole height, a steer shown at once and then where it landed.
	const job = await service.dispatch({ prompt: "GATED zebra job", cwd: repo });
	await only(t, "zebra");
	await t.waitForText(/Working \(1\)\n>.*GATED zebra job/, 60_000);
	t.keys("o");
	let screen = await t.waitForText(/Console: GATED zebra job[\s\S]*Starting the console job\./);
	// Title, transcript, label and editor fill what pi leaves the board (its footer and a chat row).
	expect(lineOf(screen, /^Steer \(enter\)/) - lineOf(screen, /^Console: /)).toBe(height - 11);
	t.type("also print the total");
	t.keys("Enter");
	await t.waitForText("steered GATED zebra job: delivered");
	await t.waitForText(/^you\s+\(steer, lands after the current step\) also print the total/m);
	writeFileSync(join(gates, job.id), "go");
	await t.waitForText(/^you\s+\(steer\) also print the total[\s\S]*Noted the steer: total printed\./m, 60_000);
	t.keys("Escape");
	await t.waitForGone("Console:");
	await clearFilter(t);

	// A long reply streams: the console follows it past the 600 characters a status carries.
	await service.dispatch({ prompt: "STREAM words", cwd: repo, model: "faux-stream/stream-1" });
	await only(t, "STREAM words");
	await t.waitForText(/Working \(1\)\n>.*STREAM words/, 60_000);
	t.keys("o");
	await t.waitForText("Console: STREAM words");
	writeFileSync(join(gates, "stream"), "go");
	// It follows the stream to its last word, past the 600 characters a status carries (about 100 of these
	// words); how far it has scrolled when a screen is read depends on the machine's pace, so the whole
	// reply is then read back: paging up from the end reaches its first words.
	await t.waitForText(/s0599/, 60_000);
	screen = await waitFor(
		() => {
			const now = t.screen();
			if (/^agent\s+s0000 s0001/m.test(now)) return now;
			t.keys("PPage");
			return undefined;
		},
		"the console's first words, paging up",
		30_000,
		250,
	);
	expect(screen).toMatch(/s0000 s0001[\s\S]*s0010/);
	t.keys("Escape");
	await t.waitForGone("Console:");
	await clearFilter(t);

	// Two attempts from the form; its worktree field says what its summary says.
	t.keys("n");
	await t.waitForText("New agent");
	t.type("Add a greeting to shared.txt");
	t.keys("C-o");
	await t.waitForText("s starts the agent from anywhere in this list");
	await t.waitForText(/worktree\s+no worktree/);
	t.keys("Down", "Down", "Down", "Down", "Down", "Down", "Enter");
	await t.waitForText(/attempts\s+2/);
	await t.waitForText(/worktree\s+each in its own worktree/);
	t.keys("s");
	await t.waitForText("dispatched 2 attempts of Add a greeting to shared.txt");
	const set = (await service.list())
		.filter((row) => row.attempt)
		.sort((a, b) => (a.attempt?.index ?? 0) - (b.attempt?.index ?? 0));
	const [r1, r2] = set.map((row) => row.id) as [string, string];
	for (const id of [r1, r2])
		await waitFor(async () => (await state(id)) === "completed", "the attempts to finish", 90_000);
	// Told apart at any width, and not flagged as overlapping each other (both rewrote shared.txt).
	await only(t, "greeting");
	screen = await t.waitForText(
		/Add a greeting to shared\.txt \[1\/2\][\s\S]*Add a greeting to shared\.txt \[2\/2\]|Add a greeting to shared\.txt \[2\/2\][\s\S]*Add a greeting to shared\.txt \[1\/2\]/,
	);
	expect(screen).not.toContain("[overlap:");

	// Keep #2: merged, #1 archived with its worktree gone, after a second yes for its uncommitted work.
	t.keys("c");
	screen = await t.waitForText(/Attempt set \S+ 2 attempts/);
	expect(screen).not.toContain("overlapping");
	t.keys("Down");
	await t.waitForText(/^>\s*#2 /m);
	t.keys("k");
	await waitFlat(t, "(y/n) Keep #2 Add a greeting to shared.txt [2/2]: merge it into main");
	await waitFlat(t, "#1 has 2 uncommitted changes");
	t.keys("y");
	await waitFlat(t, "kept #2 Add a greeting to shared.txt [2/2]: merged into main as");
	await waitFlat(t, "(y/n) Remove the worktree of #1");
	t.keys("y");
	await waitFlat(t, "removed 1 more worktree");
	expect(readFileSync(join(repo, "shared.txt"), "utf8")).toBe(`attempt ${r2}\n`);
	expect(git(repo, "worktree", "list")).not.toContain(r1);
	expect((await service.get(r1))?.archived).toBe(true);
	t.keys("Escape");
	await t.waitForGone("Attempt set");
	await clearFilter(t);

	// A worktree row that changed nothing: m says so whole, wrapped at 80 columns.
	const nothing = await service.dispatch({ prompt: "NOTHING to change", cwd: repo, worktreeMode: "worktree" });
	await waitFor(async () => (await state(nothing.id)) === "completed", "the row to finish", 60_000);
	await only(t, "NOTHING to change");
	t.keys("m");
	await waitFlat(
		t,
		`merge: row ${nothing.id} has nothing to merge: agent-board/${nothing.id} has no changes that main lacks`,
	);
}

describe("what a newcomer trips on, in real pi", { timeout: 420_000 }, () => {
	it("at 80x24", async (ctx) => {
		await newcomer(ctx, 80, 24);
	});

	it("at 160x45", async (ctx) => {
		await newcomer(ctx, 160, 45);
	});
});
