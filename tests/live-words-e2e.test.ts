/**
 * Streamed words take a path of their own (docs/engine.md, "Live view"): with the runner's status.json held
 * still (AGENT_BOARD_STATUS_MS), a real pi worker's streamed words still reach the board's shared feed, its
 * screen and the web page's rows, read from the run's words.jsonl; status.json never had them. Fails
 * without the words file (the status is the only other carrier, and it is not written).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BoardEngine } from "../src/board/engine/service.ts";
import type { BoardRow } from "../src/board/engine/types.ts";
import { BoardFeed } from "../src/board/view-model/feed.ts";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { boardOn } from "../test-support/board-on.ts";
import { createTestAgent, type TestAgent } from "../test-support/pi-harness.ts";
import { rawRequest, serveFromPi } from "../test-support/web-server.ts";
import { waitFor } from "../test-support/wait.ts";

/** faux-slow streams 12 tokens a second: the first words come at once, the last minutes later. */
const ANSWER = Array.from({ length: 3000 }, (_, n) => `word${n}`).join(" ");
const FIRST_WORDS = /word\d+/;

let agent: TestAgent;
let board: BoardEngine;
let feed: BoardFeed;
let row: BoardRow;

beforeAll(async () => {
	agent = createTestAgent({
		script: { rules: [], fallback: [{ text: ANSWER }] },
		env: { AGENT_BOARD_STATUS_MS: "3600000" },
	});
	board = boardFor(agent);
	feed = new BoardFeed(() => board);
	await feed.start();
	row = await board.dispatch({ prompt: "Stream a long answer", cwd: agent.cwd, model: "faux-slow/slow-1" });
}, 60_000);

afterAll(async () => {
	feed?.stop();
	if (row) {
		await board.stop(row.id).catch(() => undefined);
		await waitDone(board, row.id, 60_000).catch(() => undefined);
	}
	agent?.cleanup();
});

function statusText(): string {
	const status = JSON.parse(readFileSync(join(row.runDir ?? "", "status.json"), "utf8")) as {
		live?: { text?: string };
		state: string;
	};
	expect(status.state).toBe("working");
	return status.live?.text ?? "";
}

describe("streamed words' own path", { timeout: 180_000 }, () => {
	it("reach the board's feed and screen while status.json has none of them", async () => {
		const text = await waitFor(
			() => {
				const live = feed.row(row.id)?.live?.text;
				return live && FIRST_WORDS.test(live) ? live : undefined;
			},
			"streamed words on the board's feed",
			90_000,
		);
		expect(ANSWER.startsWith(text.trim()) || ANSWER.includes(text.trim())).toBe(true);
		expect(statusText()).toBe("");
		const words = readFileSync(join(row.runDir ?? "", "words.jsonl"), "utf8");
		expect(words).toMatch(/^\{"m":1,"at":\d+,"t":"word0/);

		const { dash: screen } = boardOn(board, { rows: 40, cwd: agent.cwd, feed, tickMs: 3_600_000 });
		await screen.start();
		try {
			const line = await waitFor(
				() => screen.render(160).find((l) => FIRST_WORDS.test(l)),
				"streamed words on the board's screen",
				30_000,
			);
			expect(line).toMatch(/word\d+/);
		} finally {
			screen.dispose();
		}
		expect(statusText()).toBe("");
	});

	it("reach the web page's rows while status.json has none of them", async () => {
		const served = await serveFromPi(agent, join(agent.root, "store"));
		const logged = await rawRequest(served.port, "GET", `/login?token=${served.token}`);
		const cookie = String(logged.headers["set-cookie"]).split(";")[0] ?? "";
		const text = await waitFor(
			async () => {
				const body = (await rawRequest(served.port, "GET", "/api/rows", { cookie })).body;
				const rows = (JSON.parse(body) as { rows: { id: string; liveText?: string }[] }).rows;
				const live = rows.find((r) => r.id === row.id)?.liveText;
				return live && FIRST_WORDS.test(live) ? live : undefined;
			},
			"streamed words on the page's rows",
			60_000,
		);
		expect(text).toMatch(FIRST_WORDS);
		expect(statusText()).toBe("");
	});
});
