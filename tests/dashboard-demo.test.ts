/**
 * `npm run demo` end to end in tmux at 80x24 and 160x45: seeded board, scripted model, a key sheet
 * that never breaks a word, an attempt set with something to compare and merge, clean exit.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, type TestContext } from "vitest";
import { sheetLines } from "../scripts/demo-sheet.mjs";
import { REPO_ROOT, waitFor } from "../test-support/pi-harness.ts";
import { requireTmux } from "../test-support/tmux-board.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
	for (const cleanup of cleanups.splice(0)) cleanup();
});

async function demo(ctx: TestContext, width: number, height: number): Promise<void> {
	requireTmux(ctx);
	const scratch = mkdtempSync(join(tmpdir(), "pab-demo-test-"));
	const socket = `pab-demo-${process.pid}-${width}`;
	const tmux = (args: string[]) =>
		execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
	cleanups.push(() => {
		try {
			tmux(["kill-server"]);
		} catch {
			// Already gone.
		}
		// pi may still be writing its jiti cache as tmux's SIGHUP reaches it: retry ENOTEMPTY a while.
		rmSync(scratch, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 });
	});
	const env = [`PATH=${process.env.PATH ?? ""}`, `HOME=${scratch}`, `TMPDIR=${scratch}`, "TERM=xterm-256color"];
	tmux([
		"new-session",
		"-d",
		"-s",
		"main",
		"-x",
		String(width),
		"-y",
		String(height),
		"-c",
		REPO_ROOT,
		"env",
		"-i",
		...env,
		process.execPath,
		"scripts/demo.mjs",
	]);
	tmux(["set-option", "-t", "main", "remain-on-exit", "on"]);
	const screen = () => tmux(["capture-pane", "-p", "-t", "main"]);
	const keys = (...names: string[]) => tmux(["send-keys", "-t", "main", ...names]);
	const type = (text: string) => tmux(["send-keys", "-t", "main", "-l", text]);
	const waitText = (re: RegExp, ms = 30_000) =>
		waitFor(
			() => (re.test(screen()) ? screen() : ""),
			() => `screen to show ${re}\n--- last screen ---\n${screen()}`,
			ms,
		);
	// Text that may wrap at 80 columns: matched with its whitespace folded.
	const waitFlat = (re: RegExp, ms = 30_000) =>
		waitFor(
			() => (re.test(screen().replace(/\s+/g, " ")) ? screen() : ""),
			() => `screen to show ${re}\n--- last screen ---\n${screen()}`,
			ms,
		);

	// Inside pi (its footer shows the model), the key sheet is in view, laid out for the width: its
	// lines whole, as the layout made them (two columns at 160, one at 80), no word broken.
	const shown = await waitText(/Agent board demo[\s\S]*faux-1/, 120_000);
	const demoDirs = () => readdirSync(scratch).filter((name) => name.startsWith("agent-board-demo-"));
	expect(demoDirs()).toHaveLength(1);
	const lines = shown.split("\n").map((line) => line.trim());
	const expected = sheetLines(width - 2, join(scratch, demoDirs()[0] ?? "")).map((line) => line.trim());
	// The bottom of the sheet is in view at any height; each of its lines is one of the layout's, whole.
	for (const line of expected.slice(-6)) expect(lines, `sheet line: ${line}`).toContain(line);
	if (width < 120) expect(lines).toContain("n             new agent: type a prompt, enter starts it");
	else
		expect(
			lines.some((line) => /^n\s+new agent: type a prompt, enter starts it\s+c\s+compare attempts/.test(line)),
		).toBe(true);

	type("/agent-board");
	await waitText(/\/agent-board/);
	keys("Enter");
	await waitText(/Agent board \d+ rows/);
	await waitText(/Needs input \(1\)[\s\S]*Add a cache layer/);
	await waitText(/Completed \(1\)[\s\S]*Summarise the README/);

	// Two attempts from the form: each writes GREETING.md in its worktree, so the set has work to compare and merge.
	keys("n");
	await waitText(/New agent/);
	type("Add a greeting");
	keys("C-o");
	await waitText(/s starts the agent from anywhere in this list/);
	keys("Down", "Down", "Down", "Down", "Down", "Down", "Enter");
	await waitText(/attempts\s+2/);
	keys("s");
	await waitText(/dispatched 2 attempts of Add a greeting/);
	await waitText(/Completed \(3\)/, 90_000);
	keys("/");
	await waitText(/Filter \(text/);
	type("greeting");
	keys("Enter");
	await waitFor(() => (!/Filter \(text/.test(screen()) ? "closed" : ""), "the filter input to close", 10_000);
	keys("c");
	const set = await waitText(/Attempt set \S+ 2 attempts[\s\S]*#1 .*\+3 -0 1f[\s\S]*#2 .*\+3 -0 1f/, 30_000);
	expect(set).toContain("files: GREETING.md");
	keys("m");
	await waitFlat(
		/\(y\/n\) Merge Add a greeting \[1\/2\] \(agent-board\/\S+\) into \S+: 1 file, after committing its 1 uncommitted change/,
	);
	keys("y");
	await waitFlat(/merged Add a greeting \[1\/2\] into \S+: [0-9a-f]{12}/, 30_000);
	await waitText(/Merged\. Remove its worktree/);
	keys("n");
	await waitText(/#1\s+merged → \S+/);
	keys("Escape");
	await waitFor(() => (!/Attempt set/.test(screen()) ? "gone" : ""), "compare to close", 10_000);
	keys("Escape");
	await waitFor(() => (!/filter: greeting/.test(screen()) ? "cleared" : ""), "the filter to clear", 10_000);

	keys("q");
	await waitFor(() => (!/Agent board \d+ rows/.test(screen()) ? "gone" : ""), "board to close", 10_000);
	type("/quit");
	keys("Enter");
	await waitFor(
		() => (tmux(["display-message", "-p", "-t", "main", "#{pane_dead}"]).trim() === "1" ? "dead" : ""),
		"demo to exit",
		90_000,
	);
	// Seeding and the exit said what they were doing, on the terminal pi leaves behind.
	const after = tmux(["capture-pane", "-p", "-S", "-", "-t", "main"]);
	expect(demoDirs(), after.split("\n").slice(-15).join("\n")).toEqual([]);
	expect(after).toMatch(/Seeding the demo board: 3\/3/);
	expect(after).toMatch(/Stopping the demo's background agents\.\.\.[\s\S]*Removing [\s\S]*Demo removed\./);
}

describe("npm run demo", { timeout: 300_000 }, () => {
	it("at 80x24: a seeded board, a key sheet with no broken word, two attempts with work to merge, and a clean exit", async (ctx) => {
		await demo(ctx, 80, 24);
	});

	it("at 160x45: the same, the key sheet in two columns", async (ctx) => {
		await demo(ctx, 160, 45);
	});
});
