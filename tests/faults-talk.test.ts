/**
 * Fault battery, round two (issue #20), the control channel and the queue, end to end with the real
 * runner, the real pi and the scripted model: text that quotes the prompt placeholder (case 3), a
 * reply to a queued row that is stopped before it starts (case 4), a symlinked session file and
 * loose row directories (case 2), torn, wrong-typed and hostile queue entries and run.json (case 8).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROMPT_PLACEHOLDER } from "../runner/protocol.mjs";
import { boardFor, waitDone } from "../test-support/board-helpers.ts";
import { createTestAgent, PI_CLI, REPO_ROOT, userTexts, waitFor, type TestAgent } from "../test-support/pi-harness.ts";

const agents: TestAgent[] = [];
afterAll(() => {
	for (const agent of agents) agent.cleanup();
});

function agentWith(options: Parameters<typeof createTestAgent>[0]): TestAgent {
	const agent = createTestAgent(options);
	agents.push(agent);
	return agent;
}

const userTextsOf = (agent: TestAgent) => agent.calls().flatMap((call) => userTexts(call));

describe("fault battery: the control channel", () => {
	it("case 3: a prompt, steer and resume that quote the placeholder reach the model whole; a worker without the role still fails loudly", async () => {
		const agent = agentWith({});
		const release = join(agent.root, "release-quote");
		agent.writeScript({
			rules: [
				{ match: "QUOTE-STEER", steps: [{ text: "Steer read." }] },
				{ match: "QUOTE-RESUME", steps: [{ text: "Resume read." }] },
				{ match: "QUOTE-DISPATCH", steps: [{ waitForFile: release, then: { text: "Dispatch read." } }] },
			],
			fallback: [{ text: "ok" }],
		});
		const board = boardFor(agent);
		// A pi whose worker role is missing (the wrapper drops our -e): the placeholder must not reach a model silently.
		const noRole = boardFor(agent, { piCommand: ["sh", join(REPO_ROOT, "test-support/drop-extension.sh"), process.execPath, PI_CLI] });
		const prompt = `QUOTE-DISPATCH the engine doc says: "${PROMPT_PLACEHOLDER}" and that is all.`;
		const exact = PROMPT_PLACEHOLDER;
		const [row, bare, stray] = [
			await board.dispatch({ prompt, cwd: agent.cwd }),
			await board.dispatch({ prompt: exact, cwd: agent.cwd }),
			await noRole.dispatch({ prompt: "QUOTE-NOROLE never for a model", cwd: agent.cwd }),
		];
		await waitFor(async () => (await board.get(row.id))?.live?.waitingSince, "the first run to wait for its model", 30_000);
		const steerText = `QUOTE-STEER again: ${PROMPT_PLACEHOLDER}`;
		const steered = await board.reply(row.id, steerText);
		expect(steered.delivery).toBe("steer");
		writeFileSync(release, "");
		const first = await waitDone(board, row.id);
		expect(first.state, first.error).toBe("completed");
		expect(first.latestAssistant).toBe("Steer read.");
		const resumeText = `QUOTE-RESUME ${PROMPT_PLACEHOLDER}`;
		expect((await board.reply(row.id, resumeText)).delivery).toBe("new-run");
		const resumed = await waitDone(board, row.id);
		expect(resumed.state, resumed.error).toBe("completed");
		expect(resumed.latestAssistant).toBe("Resume read.");
		const exactDone = await waitDone(board, bare.id);
		expect(exactDone.state, exactDone.error).toBe("completed");

		const texts = userTextsOf(agent);
		for (const text of [prompt, steerText, resumeText, exact]) expect(texts).toContain(text);

		const strayDone = await waitDone(noRole, stray.id);
		expect(strayDone.state).toBe("failed");
		expect(strayDone.error).toBe("the worker did not load the agent-board extension, so the prompt could not be delivered");
		expect(texts.some((text) => text.includes("QUOTE-NOROLE"))).toBe(false);
	}, 120_000);
});
