/** `npm run demo` end to end in tmux: seeded board, scripted model, clean exit. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT, waitFor } from "../test-support/pi-harness.ts";
import { requireTmux } from "../test-support/tmux-board.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
	for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("npm run demo", { timeout: 240_000 }, () => {
	it("starts pi with a seeded board and the demo model, says what it does while it seeds and exits, keeps its key sheet in view, and removes its dir on exit", async (ctx) => {
		requireTmux(ctx);
		const scratch = mkdtempSync(join(tmpdir(), "pab-demo-test-"));
		const socket = `pab-demo-${process.pid}`;
		const tmux = (args: string[]) => execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
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
		tmux(["new-session", "-d", "-s", "main", "-x", "120", "-y", "32", "-c", REPO_ROOT, "env", "-i", ...env, process.execPath, "scripts/demo.mjs"]);
		tmux(["set-option", "-t", "main", "remain-on-exit", "on"]);
		const screen = () => tmux(["capture-pane", "-p", "-t", "main"]);
		const waitText = (re: RegExp, ms = 30_000) => waitFor(() => (re.test(screen()) ? screen() : ""), `screen to show ${re}`, ms);

		// Inside pi (its footer shows the model), the key sheet is still in view. Seeding runs three real pi
		// workers and pi compiles the package cold (TMPDIR is fresh): slow on a loaded 2-core machine.
		await waitText(/Agent board demo[\s\S]*n\s+new agent: type a prompt, enter starts it[\s\S]*faux-1/, 120_000);
		const demoDirs = () => readdirSync(scratch).filter((name) => name.startsWith("agent-board-demo-"));
		expect(demoDirs()).toHaveLength(1);
		tmux(["send-keys", "-t", "main", "-l", "/agent-board"]);
		await waitText(/\/agent-board/);
		tmux(["send-keys", "-t", "main", "Enter"]);
		await waitText(/Agent board \d+ rows/);
		const board = await waitText(/Needs input \(1\)[\s\S]*Add a cache layer.*Which database should the cache use/);
		expect(board).toMatch(/A slow refactor of the parser/);
		await waitText(/Completed \(1\)[\s\S]*Summarise the README/);

		tmux(["send-keys", "-t", "main", "q"]);
		await waitFor(() => (!/Agent board \d+ rows/.test(screen()) ? "gone" : ""), "board to close", 10_000);
		tmux(["send-keys", "-t", "main", "-l", "/quit"]);
		tmux(["send-keys", "-t", "main", "Enter"]);
		await waitFor(() => (tmux(["display-message", "-p", "-t", "main", "#{pane_dead}"]).trim() === "1" ? "dead" : ""), "demo to exit", 90_000);
		// Seeding and the exit said what they were doing, on the terminal pi leaves behind.
		const after = tmux(["capture-pane", "-p", "-S", "-", "-t", "main"]);
		expect(demoDirs(), after.split("\n").slice(-15).join("\n")).toEqual([]);
		expect(after).toMatch(/Seeding the demo board: 3\/3/);
		expect(after).toMatch(/Stopping the demo's background agents\.\.\.[\s\S]*Removing [\s\S]*Demo removed\./);
	});
});
