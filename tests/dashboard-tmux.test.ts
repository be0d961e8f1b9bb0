/**
 * The dashboard end to end: real interactive pi in tmux, real board engine and workers, the
 * scripted faux model. Each test drives keys as a user would and reads the screen.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTestAgent, type TestAgent, waitFor } from "../test-support/pi-harness.ts";
import { startPiInTmux, type TmuxSession } from "../test-support/tmux.ts";

const agents: TestAgent[] = [];
const sessions: TmuxSession[] = [];

afterEach(() => {
	for (const session of sessions.splice(0)) session.kill();
	for (const agent of agents.splice(0)) agent.cleanup();
});

function setup(): { agent: TestAgent; gate: string } {
	const agent = createTestAgent();
	const gate = join(agent.root, "gate");
	agent.writeScript({
		rules: [
			{ match: "use sqlite", steps: [{ text: "Going with SQLite." }] },
			{ match: "ask me", steps: [{ toolCall: { name: "ask_user", args: { question: "Postgres or SQLite?" } } }, { text: "unreachable" }] },
			{ match: "hang forever", steps: [{ stall: true }] },
			{ match: "gated", steps: [{ waitForFile: gate, then: { text: "Gate passed, all done." } }] },
		],
		fallback: [{ text: "Done: wrote the file." }],
	});
	agents.push(agent);
	return { agent, gate };
}

async function start(agent: TestAgent): Promise<TmuxSession> {
	const tmux = startPiInTmux(agent, { width: 110, height: 34 });
	sessions.push(tmux);
	await tmux.waitForText("ponytail", 20_000).catch(() => tmux.waitForText(/\d+(\.\d+)?%/, 20_000));
	return tmux;
}

async function openBoard(tmux: TmuxSession): Promise<void> {
	tmux.type("/agent-board");
	tmux.keys("Enter");
	await tmux.waitForText("Agent board", 15_000);
}

async function dispatch(tmux: TmuxSession, prompt: string): Promise<void> {
	tmux.keys("n");
	await tmux.waitForText("New agent");
	tmux.type(prompt);
	tmux.keys("Enter");
	await tmux.waitForText("enter: start");
	tmux.keys("Enter");
	await tmux.waitForText(`dispatched ${prompt.slice(0, 40)}`);
}

/** Narrows the list to one row so board keys act on it. */
async function only(tmux: TmuxSession, text: string): Promise<void> {
	tmux.keys("/");
	await tmux.waitForText("Filter (text");
	tmux.type(text);
	tmux.keys("Enter");
	await tmux.waitForText(`filter: ${text}`);
}

async function clearFilter(tmux: TmuxSession): Promise<void> {
	tmux.keys("Escape");
	await tmux.waitForGone("filter: ");
}

describe("dashboard in real pi", { timeout: 120_000 }, () => {
	it("dispatch -> working -> completed; needs input shows the question, reply completes; stop; archive; restart keeps rows", async () => {
		const { agent, gate } = setup();
		let tmux = await start(agent);
		await openBoard(tmux);
		await tmux.waitForText("No agents yet");

		await dispatch(tmux, "gated job");
		await tmux.waitForText(/Working \(1\)[\s\S]*gated job/);
		writeFileSync(gate, "go");
		await tmux.waitForText(/Completed \(1\)[\s\S]*gated job.*Gate passed, all done\./);

		await dispatch(tmux, "ask me a question");
		await tmux.waitForText(/Needs input \(1\)[\s\S]*ask me a question.*Postgres or SQLite\?/, 30_000);
		await only(tmux, "ask me");
		tmux.keys("Enter");
		await tmux.waitForText(/Question:\s*\n\s*Postgres or SQLite\?/);
		tmux.keys("r");
		await tmux.waitForText("Reply:");
		tmux.type("use sqlite");
		tmux.keys("Enter");
		await tmux.waitForText("replied to ask me a question");
		tmux.keys("Escape");
		await tmux.waitForText(/Completed \(1\)[\s\S]*ask me a question.*Going with SQLite\./, 30_000);
		await clearFilter(tmux);

		await dispatch(tmux, "hang forever please");
		await only(tmux, "hang forever");
		await tmux.waitForText(/Working \(1\)[\s\S]*hang forever/, 30_000);
		tmux.keys("s");
		await tmux.waitForText("Stop hang forever please? (y/n)");
		tmux.keys("y");
		await tmux.waitForText(/Stopped \(1\)[\s\S]*hang forever please/, 30_000);
		await clearFilter(tmux);

		await only(tmux, "gated");
		tmux.keys("a");
		await tmux.waitForText("archived gated job");
		await tmux.waitForText("No rows match the filter");
		tmux.keys("A");
		await tmux.waitForText(/gated job.*\[archived\]/);
		tmux.keys("a");
		await tmux.waitForText("unarchived gated job");
		tmux.keys("A");
		await tmux.waitForText(/Completed \(1\)[\s\S]*gated job/);
		expect(tmux.screen()).not.toContain("[archived]");
		await clearFilter(tmux);

		tmux.keys("q");
		await tmux.waitForGone("Agent board");
		tmux.type("/quit");
		tmux.keys("Enter");
		await waitFor(() => !tmux.alive(), "pi to exit", 20_000);
		tmux.kill();

		tmux = await start(agent);
		await openBoard(tmux);
		const screen = await tmux.waitForText(/Completed \(2\)/);
		expect(screen).toMatch(/Stopped \(1\)[\s\S]*hang forever please/);
		expect(screen).toMatch(/gated job.*Gate passed/);
		expect(screen).toMatch(/ask me a question.*Going with SQLite\./);
	});

	it("notifies when a background row finishes while the board is closed, then attaches to it", async () => {
		const { agent, gate } = setup();
		const tmux = await start(agent);
		tmux.type("/agent-board dispatch gated background work");
		tmux.keys("Enter");
		await tmux.waitForText("dispatched");
		await tmux.waitForText("board: 1 running");
		expect(existsSync(gate)).toBe(false);
		writeFileSync(gate, "go");
		await tmux.waitForText(/agent-board: gated background work completed: Gate passed, all done\./, 30_000);
		await tmux.waitForGone("board: 1 running");

		await openBoard(tmux);
		await only(tmux, "background");
		tmux.keys("o");
		// The chat now shows the row's own session: its prompt and its answer.
		const screen = await tmux.waitForText(/gated background work\s[\s\S]*Gate passed, all done\.[\s\S]*Resumed session/, 20_000);
		expect(screen).not.toContain("Agent board");
		expect(screen).not.toContain("agent-board: gated background work completed");
	});
});
