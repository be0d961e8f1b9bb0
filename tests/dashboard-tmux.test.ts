/**
 * The dashboard end to end: real interactive pi in tmux, real board engine and workers, the
 * scripted faux model. Each test drives keys as a user would and reads the screen.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createBoardService } from "../src/board/service.ts";
import { createTestAgent, type TestAgent, waitFor } from "../test-support/pi-harness.ts";
import { startPiInTmux, type TmuxSession } from "../test-support/tmux.ts";

const agents: TestAgent[] = [];
const sessions: TmuxSession[] = [];

afterEach(async () => {
	for (const session of sessions.splice(0)) session.kill();
	for (const agent of agents.splice(0)) {
		// A failed test can leave a stalled worker behind; stop it before its directory goes away.
		const service = createBoardService({ storeDir: join(agent.agentDir, "agent-board"), env: agent.env });
		for (const row of await service.list({ includeArchived: true }).catch(() => [])) if (row.alive) await service.stop(row.id).catch(() => undefined);
		agent.cleanup();
	}
});

function setup(): { agent: TestAgent; gate: string } {
	const agent = createTestAgent();
	const gate = join(agent.root, "gate");
	agent.writeScript({
		rules: [
			{ match: "use sqlite", steps: [{ text: "Going with SQLite." }] },
			// The answer arrives in place, as the tool's result: the model's next step follows it.
			{ match: "ask me", steps: [{ toolCall: { name: "ask_user", args: { question: "Postgres or SQLite?" } } }, { text: "Going with SQLite." }] },
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
	await tmux.waitForText("press enter to start");
	// The list wraps: up from the first field is "start", the last.
	tmux.keys("Up", "Enter");
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
		await tmux.waitForText("Answer ask me a question");
		tmux.type("use sqlite");
		tmux.keys("Enter");
		await tmux.waitForText(/ask me a question: new run on the same session|answered ask me a question/);
		tmux.keys("Escape");
		await tmux.waitForText(/Completed \(1\)[\s\S]*ask me a question.*Going with SQLite\./, 30_000);
		await clearFilter(tmux);

		await dispatch(tmux, "hang forever please");
		await only(tmux, "hang forever");
		await tmux.waitForText(/Working \(1\)[\s\S]*hang forever/, 30_000);
		tmux.keys("s");
		await tmux.waitForText("(y/n) Stop hang forever please?");
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

	it("attaching to a running row asks, stops the run, then switches to its session", async () => {
		const { agent } = setup();
		const tmux = await start(agent);
		await openBoard(tmux);
		await dispatch(tmux, "hang forever on this");
		await tmux.waitForText(/Working \(1\)[\s\S]*hang forever on this/, 30_000);
		tmux.keys("o");
		await tmux.waitForText("(y/n) hang forever on this is running. Stop it and attach?");
		tmux.keys("y");
		const screen = await tmux.waitForText(/hang forever on this[\s\S]*Resumed session/, 30_000);
		expect(screen).not.toContain("Agent board");
		await openBoard(tmux);
		await tmux.waitForText(/Stopped \(1\)[\s\S]*hang forever on this/);
	});

	it("worktree row: dispatch in worktree mode, diff shows the worker's change, remove the worktree", async () => {
		const { agent } = setup();
		agent.writeScript({
			rules: [{ match: "make notes", steps: [{ toolCall: { name: "write", args: { path: "notes.txt", content: "worker notes\n" } } }, { text: "Wrote notes.txt." }] }],
			fallback: [{ text: "ok" }],
		});
		const repo = join(agent.root, "repo");
		mkdirSync(repo);
		const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: repo, encoding: "utf8" });
		git("init", "-q");
		writeFileSync(join(repo, "README.md"), "repo\n");
		git("add", ".");
		git("commit", "-q", "-m", "base");
		// Wide enough for the diff column beside age, usage, model and location (narrower drops it first).
		const tmux = startPiInTmux(agent, { width: 160, height: 34, cwd: repo });
		sessions.push(tmux);
		await tmux.waitForText(/faux-1/, 20_000);
		await openBoard(tmux);
		tmux.keys("n");
		await tmux.waitForText("New agent");
		tmux.type("make notes please");
		tmux.keys("Enter");
		await tmux.waitForText("press enter to start");
		tmux.keys("Down", "Down", "Down", "Down", "Enter", "Enter");
		await tmux.waitForText(/worktree\s+worktree/);
		// attempts stays 1; then start.
		tmux.keys("Down", "Down", "Enter");
		await tmux.waitForText(/Completed \(1\)[\s\S]*make notes please.*Wrote notes\.txt\./, 30_000);
		await tmux.waitForText(/\+1 -0 1f/, 15_000);
		tmux.keys("Enter");
		await tmux.waitForText(/^worktree\s+\+1 -0 1f\s/m);
		tmux.keys("d");
		await tmux.waitForText(/Diff: make notes please[\s\S]*new untracked file: notes\.txt/);
		tmux.keys("Escape");
		await tmux.waitForText(/^worktree\s/m);
		tmux.keys("w");
		await tmux.waitForText("Remove worktree");
		tmux.keys("y");
		// The worker's notes.txt is untracked, so git refuses a plain removal and the board asks again
		// before forcing. (A clean worktree's plain removal: attempts-e2e; refused then forced: board-store.)
		await tmux.waitForText("Force-remove the worktree", 15_000);
		tmux.keys("y");
		await tmux.waitForText("force-removed worktree of make notes please", 15_000);
		await tmux.waitForGone(/^worktree\s/m);
		expect(git("worktree", "list")).not.toMatch(/worktrees/);
	});
});
