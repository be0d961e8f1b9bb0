/**
 * The set-up every tmux test of the board shares: tmux present (under CI=true its absence fails the
 * test; elsewhere the test is skipped with the reason), throwaway agents whose live rows are stopped
 * before their directories go, interactive pi started and waited for, and the board opened.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, type TestContext } from "vitest";
import { type BoardEngine, createBoardService } from "../src/board/engine/service.ts";
import { type CreateAgentOptions, createTestAgent, PI_CLI, type TestAgent } from "./pi-harness.ts";
import { requires } from "./requires.ts";
import { type StartPiOptions, startPiInTmux, type TmuxSession } from "./tmux.ts";

/** Why tmux cannot be used here, or undefined when it can. */
function noTmux(): string | undefined {
	try {
		execFileSync("tmux", ["-V"], { stdio: "ignore" });
		return undefined;
	} catch {
		return "tmux is not installed";
	}
}

/** A tmux test needs tmux: missing, it fails under CI=true and is skipped (with the reason) elsewhere. */
export function requireTmux(ctx: TestContext): void {
	requires(ctx, "tmux", noTmux());
}

/** The board's store inside a test agent, as the extension inside pi finds it; its workers are the real pi. */
export function boardOf(agent: TestAgent): BoardEngine {
	return createBoardService({
		storeDir: join(agent.agentDir, "agent-board"),
		env: agent.env,
		piCommand: [process.execPath, PI_CLI],
	});
}

export interface BoardTmux {
	/** A fresh agent, cleaned up (its live rows stopped first) after the test. */
	agent(options?: CreateAgentOptions): TestAgent;
	/** Interactive pi in tmux, waited for until its footer shows the scripted model. */
	start(ctx: TestContext, agent: TestAgent, options?: StartPiOptions): Promise<TmuxSession>;
}

/** Call once at the top of a test file: it registers the cleanup. */
export function useBoardTmux(): BoardTmux {
	const agents: TestAgent[] = [];
	const sessions: TmuxSession[] = [];
	afterEach(async () => {
		for (const session of sessions.splice(0)) session.kill();
		for (const agent of agents.splice(0)) {
			// A failed test can leave a worker running; stop it before its directory goes away.
			const service = boardOf(agent);
			for (const row of await service.list({ includeArchived: true }).catch(() => []))
				if (row.alive) await service.stop(row.id).catch(() => undefined);
			agent.cleanup();
		}
	});
	return {
		agent(options) {
			const agent = createTestAgent(options);
			agents.push(agent);
			return agent;
		},
		async start(ctx, agent, options = {}) {
			requireTmux(ctx);
			const tmux = startPiInTmux(agent, options);
			sessions.push(tmux);
			await tmux.waitForText(/faux-1/, 30_000);
			return tmux;
		},
	};
}

export async function openBoard(tmux: TmuxSession): Promise<string> {
	tmux.type("/agent-board");
	tmux.keys("Enter");
	return tmux.waitForText(/Agent board \d+ rows/, 20_000);
}

/** Dispatches from pi's editor (the subcommand), as a script or a user would. */
export async function dispatchFromCommand(tmux: TmuxSession, prompt: string): Promise<void> {
	tmux.type(`/agent-board dispatch ${prompt}`);
	tmux.keys("Enter");
	await tmux.waitForText("dispatched");
}

/** Narrows the board's list to rows matching `text`, so row keys act on them. */
export async function only(tmux: TmuxSession, text: string): Promise<void> {
	tmux.keys("/");
	await tmux.waitForText("Filter (text");
	tmux.type(text);
	tmux.keys("Enter");
	// The list filters as one types, so the header says the filter before Enter lands: wait for the input to close.
	await tmux.waitForGone("Filter (text");
	await tmux.waitForText(`filter: ${text}`);
}

export async function clearFilter(tmux: TmuxSession): Promise<void> {
	tmux.keys("Escape");
	await tmux.waitForGone("filter: ");
}
