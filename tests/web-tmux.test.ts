/**
 * `/agent-board serve` typed in interactive pi (tmux): the login URL and its QR code in a panel that
 * stays until a key, the board's settings showing the server on, and `serve --stop` ending it.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isAlive } from "../runner/store/proc.mjs";
import { liveRecord } from "../src/web/web-files.ts";
import type { TmuxSession } from "../test-support/tmux.ts";
import { openBoard, useBoardTmux } from "../test-support/tmux-board.ts";

const tb = useBoardTmux();

async function press(t: TmuxSession, key: string, shows: string | RegExp): Promise<void> {
	t.keys(key);
	await t.waitForText(shows);
}

describe("serve in the TUI (tmux)", () => {
	it("shows the one-time login URL and QR code in a panel; S shows the server on; serve --stop ends it", async (ctx) => {
		const agent = tb.agent();
		const t = await tb.start(ctx, agent, { width: 110, height: 50, env: { AGENT_BOARD_WEB_PORT: "0" } });
		t.type("/agent-board serve");
		t.keys("Enter");
		const screen = await t.waitForText("enter or esc: close", 60_000);
		expect(screen).toMatch(/http:\/\/127\.0\.0\.1:\d+\/login\?token=[A-Za-z0-9_-]{43}/);
		expect(screen).toMatch(/[█▀▄]{20}/);
		expect(screen).toContain("ssh -L");
		const store = join(agent.agentDir, "agent-board");
		const record = liveRecord(store);
		expect(record && isAlive(record.pid, record.start)).toBe(true);
		t.keys("Enter");
		await t.waitForGone("enter or esc: close");

		await openBoard(t);
		await press(t, "S", /the board in a browser \(web server\)\s+on/);
		// Escape and the next key in one read are alt+key: the list must be back before q.
		t.keys("Escape");
		await t.waitForGone("the board in a browser");
		t.keys("q");
		await t.waitForGone(/Agent board \d+ rows/);
		t.type("/agent-board serve --stop");
		t.keys("Enter");
		await t.waitForText(`agent-board web: stopped (pid ${record?.pid})`, 30_000);
		expect(record && isAlive(record.pid, record.start)).toBe(false);
	}, 120_000);
});
