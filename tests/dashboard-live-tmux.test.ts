/**
 * The live dashboard in real pi (tmux, real engine and workers, scripted model): multi-line prompts
 * survive a bracketed paste, ages tick with no key pressed, the strip shows live rows while the board
 * is closed, attach and come back, live tool view in peek, and layout snapshots at 60 and 200 columns.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createBoardService } from "../src/board/service.ts";
import { createTestAgent, type TestAgent, userTexts, waitFor } from "../test-support/pi-harness.ts";
import { startPiInTmux, type TmuxSession } from "../test-support/tmux.ts";

const agents: TestAgent[] = [];
const sessions: TmuxSession[] = [];

afterEach(async () => {
	for (const session of sessions.splice(0)) session.kill();
	for (const agent of agents.splice(0)) {
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
			{ match: "gated", steps: [{ waitForFile: gate, then: { text: "Gate passed, all done." } }] },
			{ match: "run a long tool", steps: [{ toolCall: { name: "bash", args: { command: "sleep 20" } } }, { text: "Tool finished." }] },
			{ match: "hello main", steps: [{ text: "Hello from the main session." }] },
		],
		fallback: [{ text: "Done. I read the project, made the change and ran the tests: all 42 pass." }],
	});
	agents.push(agent);
	return { agent, gate };
}

async function start(agent: TestAgent, width = 110, height = 34): Promise<TmuxSession> {
	const tmux = startPiInTmux(agent, { width, height });
	sessions.push(tmux);
	await tmux.waitForText(/faux-1/, 20_000);
	return tmux;
}

async function openBoard(tmux: TmuxSession): Promise<void> {
	tmux.type("/agent-board");
	tmux.keys("Enter");
	await tmux.waitForText("Agent board", 15_000);
}

async function startForm(tmux: TmuxSession): Promise<void> {
	await tmux.waitForText("press enter to start");
	// The list wraps: up from the first field is "start", the last.
	tmux.keys("Up", "Enter");
}

async function dispatchFromCommand(tmux: TmuxSession, prompt: string): Promise<void> {
	tmux.type(`/agent-board dispatch ${prompt}`);
	tmux.keys("Enter");
	await tmux.waitForText("dispatched");
}

/** Age shown on the line of the row named `name` ("12s"). */
function ageOf(screen: string, name: string): string | undefined {
	const line = screen.split("\n").find((l) => /^[ >]/.test(l) && l.includes(name) && !l.includes("dispatched"));
	return line?.match(/\s(\d+[smhd])\s/)?.[1];
}

describe("live dashboard in real pi", { timeout: 150_000 }, () => {
	it("a bracketed multi-line paste reaches the worker with its newlines; the cursor follows the new row", async () => {
		const { agent } = setup();
		// Wide enough for the whole answer beside the age, usage, model and location columns.
		const tmux = await start(agent, 160);
		await dispatchFromCommand(tmux, "an older row");
		await openBoard(tmux);
		await tmux.waitForText(/all 42 p/, 30_000);
		tmux.keys("n");
		await tmux.waitForText("New agent");
		tmux.paste("Line one of the task\nLine two: details\nLine three");
		tmux.keys("Enter");
		await startForm(tmux);
		await tmux.waitForText("dispatched Line one of the task");
		// The cursor is on the new row, not the old one.
		await tmux.waitForText(/^>\S*\s+Line one of the task/m);
		const call = await waitFor(() => agent.calls().find((c) => userTexts(c).some((t) => t.includes("Line one of the task"))), "the worker's model request", 30_000);
		expect(userTexts(call).join("\n")).toContain("Line one of the task\nLine two: details\nLine three");
		// The name comes from the prompt's first line, not from line two.
		expect(tmux.screen()).not.toMatch(/^>\S*\s+Line two/m);
	});

	it("ages change with no key pressed, and summaries show the whole answer", async () => {
		const { agent } = setup();
		const tmux = await start(agent, 160);
		await dispatchFromCommand(tmux, "a finished row");
		await openBoard(tmux);
		const first = await tmux.waitForText(/a finished row.*all 42 p/, 30_000);
		expect(first).toContain("Done. I read the project, made the change and ran the tests: all 42 p");
		const before = ageOf(first, "a finished row");
		expect(before).toBeDefined();
		await waitFor(() => {
			const now = ageOf(tmux.screen(), "a finished row");
			return now && now !== before ? now : "";
		}, "the age to move without a key", 20_000);
	});

	it("the strip shows a live row while the board is closed, and the footer agrees", async () => {
		const { agent, gate } = setup();
		const tmux = await start(agent);
		await dispatchFromCommand(tmux, "gated strip job");
		await tmux.waitForText(/^> gated strip job \d+s/m, 20_000);
		await tmux.waitForText("board: 1 running");
		writeFileSync(gate, "go");
		await tmux.waitForGone(/^> gated strip job/m, 30_000);
		await tmux.waitForGone("board: 1 running");
	});

	it("attach, then back to the original session with its history", async () => {
		const { agent } = setup();
		const tmux = await start(agent);
		tmux.type("hello main");
		tmux.keys("Enter");
		await tmux.waitForText("Hello from the main session.", 20_000);
		await dispatchFromCommand(tmux, "a row to visit");
		await openBoard(tmux);
		await tmux.waitForText(/a row to visit.*Done\. I read/, 30_000);
		tmux.keys("/");
		tmux.type("visit");
		tmux.keys("Enter");
		await tmux.waitForText("filter: visit");
		tmux.keys("o");
		await tmux.waitForText(/a row to visit[\s\S]*Done\. I read[\s\S]*Resumed session/, 20_000);
		await tmux.waitForGone("Hello from the main session.");
		await openBoard(tmux);
		await tmux.waitForText(/attached: a row to visit/);
		await tmux.waitForText(/^ ?>?@\S* a row to visit/m);
		tmux.keys("b");
		await tmux.waitForText("Hello from the main session.", 20_000);
		await tmux.waitForGone("Done. I read");
		await openBoard(tmux);
		expect(tmux.screen()).not.toContain("attached:");
	});

	it("peek shows the running tool live, with a ticking age", async () => {
		const { agent } = setup();
		const tmux = await start(agent);
		await dispatchFromCommand(tmux, "run a long tool");
		await openBoard(tmux);
		await tmux.waitForText(/Working \(1\)/, 30_000);
		tmux.keys("Enter");
		const first = await tmux.waitForText(/^now\s+bash (\d+)s/m, 30_000);
		const age = first.match(/^now\s+bash (\d+)s/m)?.[1];
		await waitFor(() => (tmux.screen().match(/^now\s+bash (\d+)s/m)?.[1] ?? age) !== age, "the tool age to tick", 20_000);
	});

	it("layout snapshots at 60 and 200 columns: ? stays visible, columns grow with the width", async () => {
		for (const width of [60, 200]) {
			const { agent } = setup();
			const tmux = await start(agent, width, 30);
			await dispatchFromCommand(tmux, "a row with a rather long descriptive name for layout");
			await openBoard(tmux);
			const screen = await tmux.waitForText(/Completed \(1\)/, 30_000);
			const lines = screen.split("\n");
			const hint = lines.filter((l) => l.trim()).at(-1) ?? "";
			const boardHint = lines.find((l) => /\? help/.test(l));
			expect(boardHint, `hint line at ${width}: ${hint}`).toBeDefined();
			const row = lines.find((l) => l.includes("a row with a rather") && !l.includes("dispatched")) ?? "";
			console.log(`--- board at ${width} columns ---\n${screen}`);
			if (width === 200) {
				expect(row).toContain("a row with a rather long descriptive name for layout");
				expect(row).toContain("Done. I read the project, made the change and ran the tests: all 42 pass.");
			} else expect(row.length).toBeLessThanOrEqual(60);
			tmux.kill();
		}
	});
});
