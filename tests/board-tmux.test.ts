/**
 * A newcomer's path through the board, in real pi under tmux at 80x24 and 120x40, with the real
 * engine and workers and the scripted model: pi started the README's way, `/ponytail lite` + enter,
 * the "asks:" notice, the frame with 30 rows, help to its last key, `n` + prompt + enter, the whole
 * question in the answer box, the newest words of a streaming row, a live console that steers a
 * running row which keeps running, attach and back with pi's footer saying so, stop and archive, and
 * the same rows after a restart.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { cloneRows } from "../test-support/clone-rows.ts";
import { userTexts, waitFor } from "../test-support/pi-harness.ts";
import type { TmuxSession } from "../test-support/tmux.ts";
import { boardOf, clearFilter, only, openBoard, useBoardTmux } from "../test-support/tmux-board.ts";

const tb = useBoardTmux();

const QUESTION = `${"Which of the storage engines should the cache layer use, given the read-heavy workload and the nightly batch jobs? ".repeat(3)}END-OF-QUESTION`;
const WORDS = Array.from({ length: 2400 }, (_, i) => `w${String(i).padStart(4, "0")}`).join(" ");

/** The SGR sequences (styles) of the screen line that contains `text` (tmux capture with escapes). */
function stylesOf(tmux: TmuxSession, text: string): string[] {
	const screen = execFileSync(
		"tmux",
		["-L", tmux.socket, "-f", "/dev/null", "capture-pane", "-p", "-e", "-t", "main"],
		{ encoding: "utf8" },
	);
	const line = screen.split("\n").find((l) => l.includes(text)) ?? "";
	return [...line.matchAll(/\x1b\[[0-9;:]*m/g)]
		.map((m) => m[0])
		.filter((sgr) => sgr !== "\x1b[0m" && sgr !== "\x1b[m");
}

async function newcomer(ctx: TestContext, width: number, height: number): Promise<void> {
	const agent = tb.agent();
	const gate = join(agent.root, "gate");
	agent.writeScript({
		rules: [
			{ match: "hello main", steps: [{ text: "Hello from the main session." }] },
			{
				match: "ask long",
				steps: [
					{ toolCall: { name: "ask_user", args: { question: QUESTION, options: ["Postgres", "SQLite"] } } },
					{ text: "Going with Postgres." },
				],
			},
			{
				match: "console job",
				steps: [
					{
						toolCall: { name: "bash", args: { command: `while [ ! -f ${gate} ]; do sleep 0.2; done` } },
						text: "Starting the console job.",
					},
					{ text: "Console job done." },
				],
			},
			{ match: "also print the total", steps: [{ text: "Noted the steer: total printed." }] },
			{ match: "stream words", steps: [{ text: WORDS }] },
		],
		fallback: [{ text: "Done: wrote the file." }],
	});
	const service = boardOf(agent);
	const storeDir = join(agent.agentDir, "agent-board");
	// Thirty finished rows: one real run, copied on disk.
	const seed = await service.dispatch({ prompt: "seed row", cwd: agent.cwd });
	await waitFor(async () => (await service.get(seed.id))?.state === "completed", "the seed row to finish", 60_000);
	cloneRows(storeDir, seed.id, 1, 30);

	// The README's "with your own models" command (npm run pi -- -e ./src/index.ts).
	const t = await tb.start(ctx, agent, { width, height, viaScript: true });
	t.type("hello main");
	t.keys("Enter");
	await t.waitForText("Hello from the main session.");

	// `/ponytail lite` + enter runs at once; the next command typed right after does not glue onto it.
	t.type("/ponytail lite");
	t.keys("Enter");
	t.type("/ponytail ultra");
	t.keys("Enter");
	await t.waitForText("○ ponytail ultra");
	expect(t.screen()).not.toContain("too many arguments");
	const log = readFileSync(join(agent.home, ".cache/ponytail/commands.log"), "utf8")
		.trim()
		.split("\n")
		.map((line) => (JSON.parse(line) as { args: string }).args);
	expect(log).toEqual(["lite", "ultra"]);

	// With the board closed: a question arrives as a notice that is not drawn dim, and the strip lists the row.
	await service.dispatch({ prompt: "ask long question", cwd: agent.cwd });
	await t.waitForText("agent-board: ask long question asks:", 60_000);
	await t.waitForText(/^\? ask long question \d+s/m);
	// pi's footer path is dim: the notice must carry a style that line does not.
	const dim = stylesOf(t, agent.cwd);
	expect(dim.length).toBeGreaterThan(0);
	expect(stylesOf(t, "agent-board: ask long question asks:").filter((sgr) => !dim.includes(sgr))).not.toEqual([]);

	// The board with 31 rows: header, status and hint lines all show; the strip hides; ages tick with no key.
	await openBoard(t);
	// The header comes first and the hint line last: a screen taken as the header shows may be half drawn.
	let screen = await t.waitForText(/Agent board 31 rows[\s\S]*enter peek .*\? help/);
	await t.waitForGone(/^\? ask long question \d+s/m);
	const age = () => /ask long question .*?\s(\d+)s\s/.exec(t.screen())?.[1];
	const before = age();
	await waitFor(() => age() !== before, "an age to move with no key pressed");
	t.keys("PPage");
	for (let i = 0; i < 4; i++) t.keys("NPage");
	screen = await t.waitForText(/^>.*cloned row/m);
	expect(screen).toMatch(/Agent board 31 rows/);
	expect(screen).toMatch(/\? help/);

	// Help scrolls to its last key.
	t.keys("?");
	await t.waitForText(/^Keys( \d+-\d+\/\d+)?\s*$/m);
	t.keys("G");
	await t.waitForText(/^ {2}q\s+close the board/m);
	t.keys("Escape");
	await t.waitForGone(/^ {2}q\s+close the board/m);

	// n, a prompt (pasted, two lines), enter: a worker starts with the remembered choices shown above the editor.
	t.keys("n");
	// It wraps at 80 columns: any space may be a line break.
	await t.waitForText(
		new RegExp(`in \\S*work${" · local · pi's default model · no worktree · 1 attempt".replace(/ /g, "\\s+")}`),
	);
	t.paste("Line one of the task\nLine two: details");
	t.keys("Enter");
	await t.waitForText("dispatched Line one of the task");
	await t.waitForText(/^>\S*\s+Line one of the task.*Done: wrote the file\./m, 60_000);
	const call = await waitFor(
		() => agent.calls().find((c) => userTexts(c).some((text) => text.includes("Line one of the task"))),
		"the worker's request",
	);
	expect(userTexts(call).join("\n")).toContain("Line one of the task\nLine two: details");
	// Peek of a row without a worktree offers no diff, compare or merge (the peek's own lines, not the list's hints).
	t.keys("Enter");
	screen = await t.waitForText(/^cwd\s[\s\S]*^r reply.*\? help/m);
	expect(screen).not.toMatch(/d diff|c compare|m merge/);
	// Escape and the next key in one read (typed fast while pi draws; pi reads them as alt+/) are Escape, then
	// the key: the peek closes and the filter opens.
	t.keys("Escape", "/");
	await t.waitForText("Filter (text, s:<state>, on:<target>): enter keeps it, escape clears it");
	t.keys("Escape");
	await t.waitForGone("Filter (text");

	// The answer box shows the whole question, wrapped, with its choices.
	await only(t, "ask long");
	t.keys("r");
	// The notice above the board holds the question too: only what follows the box's label counts.
	screen = await t.waitForText(/Question:[\s\S]*1\. Postgres[\s\S]*2\. SQLite/);
	const box = screen.slice(screen.indexOf("Question:")).replace(/\s+/g, " ");
	expect(box).toContain(QUESTION);
	t.keys("Tab");
	await t.waitForText(/^ Postgres\s*$/m);
	t.keys("Enter");
	await t.waitForText(/answered ask long question|ask long question: new run/);
	await t.waitForText(/ask long question.*Going with Postgres\./, 60_000);
	await clearFilter(t);

	// A streaming row: peek shows the newest words from a word boundary, a fresh activity age, the model that runs.
	const stream = await service.dispatch({ prompt: "stream words now", cwd: agent.cwd, model: "faux-stream/stream-1" });
	await only(t, "stream words");
	t.keys("Enter");
	await t.waitForText(/Streaming \(newest words\):\n\s+…w\d{4} /, 60_000);
	screen = await t.waitForText(/w0[4-9]\d\d/, 60_000);
	expect(screen).toMatch(/^activity\s+[01]s ago · running/m);
	expect(screen).toMatch(/^model\s+faux-stream\/stream-1/m);
	expect(screen).not.toContain("not run yet");
	t.keys("s");
	await t.waitForText("(y/n) Stop stream words now?");
	t.keys("y");
	await t.waitForText(/- Stopped\s+stream words now/, 60_000);
	expect((await service.get(stream.id))?.alive).toBe(false);
	t.keys("a");
	await t.waitForText("archived stream words now");
	await clearFilter(t);

	// The live console on a running row steers it, and leaving it leaves the agent running.
	const job = await service.dispatch({ prompt: "console job please", cwd: agent.cwd });
	await only(t, "console job");
	await t.waitForText(/Working \(1\)[\s\S]*console job please/, 60_000);
	t.keys("o");
	await t.waitForText(/Console: console job please[\s\S]*Starting the console job\./);
	const runId = (await service.get(job.id))?.currentRunId;
	t.keys("Tab");
	await t.waitForText("no choices offered: type your answer");
	t.type("also print the total");
	t.keys("Enter");
	await t.waitForText("steered console job please: delivered");
	t.keys("Escape");
	screen = await t.waitForText(/Working \(1\)[\s\S]*console job please/);
	expect(screen).not.toContain("Console:");
	const running = await service.get(job.id);
	expect(running?.alive).toBe(true);
	expect(running?.currentRunId).toBe(runId);
	writeFileSync(gate, "go");
	await t.waitForText(/Completed \(1\)\n.*console job please.*Noted the steer: total printed\./, 60_000);
	const steered = agent.calls().filter((c) => userTexts(c).some((text) => text.includes("console job please")));
	expect(steered.at(-1) && userTexts(steered.at(-1)!).at(-1)).toBe("also print the total");
	// One worker served the job and the steer: the run went on, no new run was started.
	expect(new Set(steered.map((c) => c.pid)).size).toBe(1);

	// A finished row attaches: pi's footer says so and how to go back; back returns to the session we came from.
	t.keys("o");
	await t.waitForText("attached to console job please · /agent-board back returns", 30_000);
	await t.waitForGone("Hello from the main session.");
	t.type("/agent-board back");
	t.keys("Enter");
	await t.waitForText("Hello from the main session.", 30_000);
	await t.waitForGone("attached to console job please");

	// The board is files, not memory: a new pi shows the same rows.
	if (width < 120) return;
	t.type("/quit");
	t.keys("Enter");
	await waitFor(() => !t.alive(), "pi to exit", 30_000);
	const again = await tb.start(ctx, agent, { width, height });
	await openBoard(again);
	screen = await again.waitForText(/Agent board 33 rows/);
	expect(screen).toMatch(/Completed \(33\)/);
	expect(screen).toMatch(/ask long question.*Going with Postgres\./);
}

describe("the board for a newcomer, in real pi", { timeout: 300_000 }, () => {
	it("at 80x24", async (ctx) => {
		await newcomer(ctx, 80, 24);
	});

	it("at 120x40", async (ctx) => {
		await newcomer(ctx, 120, 40);
	});
});
